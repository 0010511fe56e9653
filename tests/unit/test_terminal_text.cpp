// base/terminal_text: which logs draw a screen, and the text left of one without its escapes.
#include <catch2/catch.hpp>

#include "base/terminal_text.hpp"

using team::draws_screen;
using team::strip_escapes;

TEST_CASE("lines with colours, progress bars and erased lines do not draw a screen", "[terminal]") {
    CHECK_FALSE(draws_screen(""));
    CHECK_FALSE(draws_screen("hello\nworld\n"));
    CHECK_FALSE(draws_screen("\x1b[1;31mred\x1b[0m text\n"));
    CHECK_FALSE(draws_screen("10%\r50%\r100%\n"));
    CHECK_FALSE(draws_screen("\x1b[2Kerased line\n"));
    CHECK_FALSE(draws_screen("\x1b]0;a title\x07text\n"));  // a window title
    CHECK_FALSE(draws_screen("\x1b[?25l hidden cursor \x1b[?25h"));
}

TEST_CASE("cursor movement, erasing the display and the alternate screen draw one", "[terminal]") {
    CHECK(draws_screen("\x1b[?1049hfull screen"));
    CHECK(draws_screen("\x1b[?47h"));
    CHECK(draws_screen("\x1b[5;10Hat row 5"));
    CHECK(draws_screen("\x1b[H"));
    CHECK(draws_screen("\x1b[2J"));
    CHECK(draws_screen("line\n\x1b[3A\x1b[2Kredrawn"));  // Ink's redraw: up, erase, write
    CHECK(
        draws_screen("\x1b"
                     "7saved\x1b"
                     "8"));
    CHECK(draws_screen("\x1b[1;20r"));
}

TEST_CASE("strip_escapes leaves the text: no sequence, no control character", "[terminal]") {
    CHECK(strip_escapes("plain\ttext\n") == "plain\ttext\n");
    CHECK(strip_escapes("\x1b[1;31mred\x1b[0m and \x1b[38;5;208morange\x1b[m\n") ==
          "red and orange\n");
    CHECK(strip_escapes("\x1b]0;title\x07shown\n") == "shown\n");
    CHECK(strip_escapes("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n") == "link\n");
    CHECK(strip_escapes("\x1b[?1049h\x1b[5;10Hdrawn\x1b[?1049l") == "drawn");
    CHECK(strip_escapes("\x1b(Bcharset") == "charset");
    CHECK(strip_escapes("a\x07"
                        "b\x01"
                        "c\x7f") == "abc");
    CHECK(strip_escapes("cut at the end \x1b[1;3") == "cut at the end ");
}

TEST_CASE("strip_escapes reads carriage returns and backspaces as a terminal shows them",
          "[terminal]") {
    CHECK(strip_escapes("10%\r50%\r100%\n") == "100%\n");
    CHECK(strip_escapes("windows\r\nline\r\n") == "windows\nline\n");
    CHECK(strip_escapes("first\nabc\bd\n") == "first\nabd\n");
    CHECK(strip_escapes("é\b\n") == "\n");  // a whole UTF-8 character
    CHECK(strip_escapes("\bx") == "x");
}
