#include "proc/signals.hpp"

#include <signal.h>

#include <algorithm>
#include <cctype>

#include "base/error.hpp"

namespace team::proc {

namespace {

struct Named {
    const char* name;
    int number;
    bool stops;
};

constexpr Named kSignals[] = {
    {"SIGHUP", SIGHUP, true},        {"SIGINT", SIGINT, true},    {"SIGQUIT", SIGQUIT, true},
    {"SIGILL", SIGILL, false},       {"SIGTRAP", SIGTRAP, false}, {"SIGABRT", SIGABRT, false},
    {"SIGBUS", SIGBUS, false},       {"SIGFPE", SIGFPE, false},   {"SIGKILL", SIGKILL, true},
    {"SIGUSR1", SIGUSR1, false},     {"SIGSEGV", SIGSEGV, false}, {"SIGUSR2", SIGUSR2, false},
    {"SIGPIPE", SIGPIPE, false},     {"SIGALRM", SIGALRM, false}, {"SIGTERM", SIGTERM, true},
    {"SIGCHLD", SIGCHLD, false},     {"SIGCONT", SIGCONT, false}, {"SIGSTOP", SIGSTOP, false},
    {"SIGTSTP", SIGTSTP, false},     {"SIGTTIN", SIGTTIN, false}, {"SIGTTOU", SIGTTOU, false},
    {"SIGURG", SIGURG, false},       {"SIGXCPU", SIGXCPU, false}, {"SIGXFSZ", SIGXFSZ, false},
    {"SIGVTALRM", SIGVTALRM, false}, {"SIGPROF", SIGPROF, false}, {"SIGWINCH", SIGWINCH, false},
    {"SIGIO", SIGIO, false},         {"SIGPWR", SIGPWR, false},   {"SIGSYS", SIGSYS, false},
};

}  // namespace

int parse_signal(std::string_view text, std::string_view option, bool stop_only) {
    std::string upper;
    for (char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper.rfind("SIG", 0) != 0) upper = "SIG" + upper;
    for (const auto& s : kSignals) {
        bool by_number = !text.empty() && std::all_of(text.begin(), text.end(), ::isdigit) &&
                         text.size() < 4 && std::stoi(std::string(text)) == s.number;
        if ((upper == s.name || by_number) && (s.stops || !stop_only)) return s.number;
    }
    throw usage_error("invalid signal " + quote(text) + " for " + std::string(option) +
                      (stop_only ? ": use SIGTERM, SIGINT, SIGHUP, SIGQUIT or SIGKILL"
                                 : ": use a name like SIGTERM"));
}

std::string signal_name(int sig) {
    for (const auto& s : kSignals) {
        if (s.number == sig) return s.name;
    }
    return "SIG" + std::to_string(sig);
}

}  // namespace team::proc
