// How a host is reached over ssh: its name, its ssh destination and its team path checked before
// they are stored or used (no option, no shell syntax), and the ssh command line the link runs,
// with the options that make a cut link noticed in time.
#include "hosts/ssh_target.hpp"

#include <algorithm>
#include <cstdlib>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/programs.hpp"
#include "hosts/link_socket.hpp"

namespace team::hosts {

namespace fs = std::filesystem;

namespace {

// How long a cut link goes unnoticed (1 s between keep-alives, 2 unanswered): with ssh's connect
// timeout (kSshConnectTimeoutS), SPEC 16's "host loss noticed" within 5 s.
constexpr int kAliveIntervalS = 1;
constexpr int kAliveCountMax = 2;

// A word for the far shell, which ssh hands the command to: single-quoted.
std::string shell_word(const std::string& word) {
    std::string out = "'";
    for (char c : word) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    return out + "'";
}

bool bad_char(char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
}

}  // namespace

void check_host_name(const std::string& name) {
    check_name(name, "host name");
}

void check_ssh_destination(const std::string& ssh) {
    bool ok = !ssh.empty() && ssh.size() <= 255 && ssh.front() != '-' &&
              std::none_of(ssh.begin(), ssh.end(), [](char c) {
                  return bad_char(c) || c == ' ' || c == '\'' || c == '"' || c == ';' || c == '$' ||
                         c == '`' || c == '\\' || c == '|' || c == '&';
              });
    if (!ok) {
        throw usage_error("bad ssh destination " + quote(ssh) +
                          ": expected [USER@]HOST (a name from ssh_config, a host name or an "
                          "address), with no spaces, quotes or shell characters");
    }
}

void check_team_path(const std::string& path) {
    bool ok = !path.empty() && path.size() <= 4096 && path.front() != '-' &&
              std::none_of(path.begin(), path.end(), bad_char);
    if (!ok) {
        throw usage_error("bad team path " + quote(path) +
                          ": expected the far team's program, such as /usr/bin/team");
    }
}

std::vector<std::string> ssh_command(const fs::path& home, const LinkTarget& target,
                                     const std::vector<std::string>& remote) {
    const char* path = std::getenv("PATH");
    std::string ssh =
        find_program("ssh", path ? path : "/usr/bin:/bin", "/").value_or("/usr/bin/ssh");
    std::vector<std::string> argv = {
        ssh,  "-T",
        "-o", "BatchMode=yes",
        "-o", "ConnectTimeout=" + std::to_string(kSshConnectTimeoutS),
        "-o", "ServerAliveInterval=" + std::to_string(kAliveIntervalS),
        "-o", "ServerAliveCountMax=" + std::to_string(kAliveCountMax),
        "-o", "ConnectionAttempts=1",
        "-o", "ControlMaster=auto",
        "-o", "ControlPath=" + (hosts_dir(home) / (target.name + ".ctl")).string(),
        "-o", "ControlPersist=no",
        "-o", "LogLevel=ERROR",
        "--", target.ssh,
    };
    std::string command;
    for (const auto& word : remote) {
        if (!command.empty()) command += ' ';
        command += shell_word(word);
    }
    argv.push_back("exec " + command);
    return argv;
}

}  // namespace team::hosts
