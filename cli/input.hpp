// Free-text arguments: a value of "-" means "read it from standard input", since Linux refuses
// a single argument longer than 128 KiB and texts may be up to 1 MiB (SPEC 5).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace team::cli {

// `value` itself, or all of stdin when it is "-" (at most 1 MiB + 2 bytes are read, so the core
// can refuse what is longer without this holding an unbounded input in memory).
// One trailing newline of a text read from stdin is dropped (as `echo` adds one).
std::string text_argument(const std::string& value);

// Declares the CMD [ARGS...] of a command that runs one (run, spawn, shell start). Everything
// after the first "--" of the command line is taken verbatim, never seen by CLI11 (which reads
// an argument like "[a,b]" as a list); without "--", the words after the options are CMD.
// `name` and `description` default to CMD's (an argv executed as given). When `required`, no
// CMD is a usage error naming it (spawn's is not: a preset gives its program).
void command_argument(CLI::App* cmd, std::vector<std::string>& argv,
                      const std::string& name = "CMD", const std::string& description = "",
                      bool required = true);

// Called once with the whole command line, before parsing: keeps what follows the first "--"
// for command_argument and returns the arguments CLI11 should parse.
std::vector<std::string> split_command_line(const CLI::App& app, int argc, char** argv);

// Makes a list option take each value exactly as given: CLI11 otherwise reads a value like
// "[a,b]" as a list of two and drops "[]". Returns the option.
CLI::Option* verbatim(CLI::Option* option);

// An option whose value is kept only when it is given, so that an empty value ("--timeout ''")
// is checked like any other rather than taken for "not given".
CLI::Option* optional_value(CLI::App* cmd, const std::string& name,
                            std::optional<std::string>& value, const std::string& description);

// A whole number from `min` up, with an error message in the house style.
CLI::Validator whole_number(long long min);

}  // namespace team::cli
