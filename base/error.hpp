// The one error type of the core. Every failure the user can see is a team::Error with a
// code from SPEC 1.4; the command line turns it into the message, the JSON and the exit code
// in one place (cli/app.cpp).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

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

constexpr int exit_code(ErrorCode code) {
    switch (code) {
        case ErrorCode::failed:
            return 1;
        case ErrorCode::usage:
            return 2;
        case ErrorCode::not_found:
            return 3;
        case ErrorCode::refused:
            return 4;
        case ErrorCode::timeout:
            return 124;
        case ErrorCode::unconfirmed:
            return 6;
    }
    return 1;
}

inline std::string_view code_name(ErrorCode code) {
    switch (code) {
        case ErrorCode::failed:
            return "failed";
        case ErrorCode::usage:
            return "usage";
        case ErrorCode::not_found:
            return "not_found";
        case ErrorCode::refused:
            return "refused";
        case ErrorCode::timeout:
            return "timeout";
        case ErrorCode::unconfirmed:
            return "unconfirmed";
    }
    return "failed";
}

class Error : public std::runtime_error {
  public:
    Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
    ErrorCode code() const { return code_; }

  private:
    ErrorCode code_;
};

inline Error usage_error(const std::string& m) {
    return Error(ErrorCode::usage, m);
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
