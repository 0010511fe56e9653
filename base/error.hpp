// The one error type of the core. Every failure the user can see is a team::Error with a
// code from SPEC 1.4; the command line turns it into the message, the JSON and the exit code
// in one place (cli/app.cpp).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace team {

enum class ErrorCode {
    failed,     // exit 1: tried and failed
    usage,      // exit 2: bad arguments or input, nothing changed
    not_found,  // exit 3: the named thing does not exist
    refused,    // exit 4: not allowed for this caller or in this state, nothing changed
    timeout,    // exit 124: a wait ran out
    // exit 6: what was done cannot be confirmed (an agent's host did not answer, SPEC 16); it
    // is never reported as done
    unconfirmed,
};

// Each code's exit code, its name in JSON (`code`) and its HTTP status: the one table every face
// takes them from.
struct ErrorKind {
    ErrorCode code;
    int exit;
    std::string_view name;
    int http;
};
inline constexpr ErrorKind kErrorKinds[] = {
    {ErrorCode::failed, 1, "failed", 500},
    {ErrorCode::usage, 2, "usage", 400},
    {ErrorCode::not_found, 3, "not_found", 404},
    {ErrorCode::refused, 4, "refused", 409},
    {ErrorCode::timeout, 124, "timeout", 504},
    // the host did not answer: as a gateway whose upstream gave no valid answer
    {ErrorCode::unconfirmed, 6, "unconfirmed", 502},
};

constexpr const ErrorKind& error_kind(ErrorCode code) {
    for (const auto& k : kErrorKinds) {
        if (k.code == code) return k;
    }
    return kErrorKinds[0];
}

constexpr int exit_code(ErrorCode code) {
    return error_kind(code).exit;
}

inline std::string_view code_name(ErrorCode code) {
    return error_kind(code).name;
}

constexpr int http_status(ErrorCode code) {
    return error_kind(code).http;
}

class Error : public std::runtime_error {
  public:
    Error(ErrorCode code, const std::string& message, std::string param = "")
        : std::runtime_error(message), code_(code), param_(std::move(param)) {}
    ErrorCode code() const { return code_; }
    // The parameter the error is about, as the operations table names it (force_after), when it
    // is about one value (a malformed duration, a required value missing); "" otherwise. Set
    // where the value is checked, so a face names the field without reading the message.
    const std::string& param() const { return param_; }

  private:
    ErrorCode code_;
    std::string param_;
};

inline Error usage_error(const std::string& m) {
    return Error(ErrorCode::usage, m);
}
// A usage error about the value of parameter `param`.
inline Error usage_error(const std::string& m, std::string param) {
    return Error(ErrorCode::usage, m, std::move(param));
}
inline Error not_found(const std::string& m) {
    return Error(ErrorCode::not_found, m);
}
inline Error refused(const std::string& m) {
    return Error(ErrorCode::refused, m);
}
inline Error failed(const std::string& m) {
    return Error(ErrorCode::failed, m);
}

// Quotes a user-supplied value for an error message: single quotes, with control characters
// escaped and very long values shortened, so a hostile string cannot garble the terminal.
std::string quote(std::string_view value);

}  // namespace team
