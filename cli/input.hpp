// Free-text arguments: a value of "-" means "read it from standard input", since Linux refuses
// a single argument longer than 128 KiB and texts may be up to 1 MiB (SPEC 5).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace team::cli {

// `value` itself, or all of stdin when it is "-" (at most 1 MiB + 1 byte is read, so the core
// can refuse what is longer without this holding an unbounded input in memory).
// One trailing newline of a text read from stdin is dropped (as `echo` adds one).
std::string text_argument(const std::string& value);

// A whole number from `min` up, with an error message in the house style.
CLI::Validator whole_number(long long min);

}  // namespace team::cli
