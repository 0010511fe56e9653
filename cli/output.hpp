// How results reach the user (SPEC 1.4): one JSON document on stdout with --json, otherwise
// aligned tables and short lines, coloured only on a terminal.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace team::cli {

class Output {
  public:
    Output(bool json, bool color) : json_(json), color_(color) {}

    bool json() const { return json_; }
    bool color() const { return color_; }

    // One JSON document (or one JSON Lines record), on its own line, flushed.
    void print_json(const nlohmann::json& doc) const;
    // One line of human output, flushed.
    void line(const std::string& text) const;

    // Escapes for the terminal; empty strings when colour is off.
    std::string bold(const std::string& s) const { return paint("1", s); }
    std::string dim(const std::string& s) const { return paint("2", s); }
    std::string green(const std::string& s) const { return paint("32", s); }
    std::string red(const std::string& s) const { return paint("31", s); }
    std::string yellow(const std::string& s) const { return paint("33", s); }

  private:
    std::string paint(const char* code, const std::string& s) const;
    bool json_;
    bool color_;
};

// Aligned columns. Cells may hold colour escapes; widths count what is visible. Control
// characters in cells are shown escaped, so no value can break the layout.
class Table {
  public:
    explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    bool empty() const { return rows_.empty(); }
    void print(const Output& out) const;

  private:
    std::vector<std::string> headers_;
    std::vector<std::vector<std::string>> rows_;
};

// A free-text value made safe for one table cell: control characters escaped, cut to `max`
// visible characters (on a UTF-8 boundary) with an ellipsis.
std::string cell(const std::string& text, size_t max = 60);

}  // namespace team::cli
