// The wire to another host (SPEC 16, second half). What runs on a host is done by that host's own
// `team`: requests go to it as JSON lines over one long-lived `ssh -T HOST team __channel` per
// host and home, never as shell one-liners, and never one ssh session per request (past sshd's
// MaxSessions a client falls back to a full login, silently).
//
// The near side: the link, `team __link NAME`, a detached process of the home that holds that
// ssh (with a ControlMaster of its own, whose stale socket it notices and replaces) and listens
// on `<home>/hosts/NAME.sock`; each command connects, writes one request and reads its reply.
// The link numbers the requests of all its clients, so any number run at once over the one
// session. It says hello first (this team's version, the store), and the far side answers with
// its version, its home's id and its schema; a refusal there is the answer to every request
// until it is tried again. It exits when its ssh has been idle for a while.
//
// The far side is `ops::serve_channel` (ops/remote.hpp), which runs each request through the
// operations table as that host's own command would.
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace team::hosts {

// How to reach a host.
struct LinkTarget {
    std::string name;       // the host's name in the store
    std::string ssh;        // [USER@]HOST
    std::string team_path;  // the far team binary
};

// Checks a host's name, its ssh destination and its team path (no option, no shell syntax).
void check_host_name(const std::string& name);
void check_ssh_destination(const std::string& ssh);
void check_team_path(const std::string& path);

// The host did not answer (ssh could not connect, was cut, or its team is gone): what a caller
// reports as unconfirmed where it matters (kill-agent), never as done.
struct Unreachable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Sends `request` (an object; its "id" is the link's to set) to the host through the home's link
// (started when none runs: `team_binary` is this program) and returns the
// reply line as JSON ({"doc", "exit", "answer", "error", "code"}, or {"hello": …}, {"pong": …};
// "answer" true when the exit code is part of the answer, ops::Result::exit_is_answer). Throws
// Unreachable when no reply comes within `timeout`, or the host cannot be reached; a refusal by
// the far side (another version, another schema, a wrong store) is a reply with "error".
nlohmann::json call(const std::filesystem::path& home, const LinkTarget& target,
                    const std::string& team_binary, nlohmann::json request,
                    std::chrono::milliseconds timeout);

// Ends the home's link to host `name`, if one runs (`host remove`). Its ssh goes with it.
void stop_link(const std::filesystem::path& home, const std::string& name);

// `team __link NAME`: the link's body. `ready_fd` gets "ok" once it listens. `store_url` is what
// the far side is asked to use (its hello). Returns the exit code.
int run_link(const std::filesystem::path& home, const LinkTarget& target,
             const std::string& version, const std::string& store_url, int ready_fd);

// The ssh command that reaches `target` with the link's options, running `remote` (argv, each
// word quoted for the far shell).
std::vector<std::string> ssh_command(const std::filesystem::path& home, const LinkTarget& target,
                                     const std::vector<std::string>& remote);

}  // namespace team::hosts
