// Signal names as users write them and as JSON shows them ("SIGTERM").
#pragma once

#include <string>
#include <string_view>

namespace team::proc {

// "SIGTERM", "TERM", "sigterm" or "15" -> 15. Throws a usage error naming `option` for anything
// else, listing what is accepted. Only signals that make sense for stopping a process are
// accepted when `stop_only` is set (SIGTERM, SIGINT, SIGKILL, SIGHUP, SIGQUIT).
int parse_signal(std::string_view text, std::string_view option, bool stop_only);

// 9 -> "SIGKILL"; an unknown number -> "SIG<n>".
std::string signal_name(int sig);

}  // namespace team::proc
