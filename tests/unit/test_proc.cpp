// Process control primitives on real processes: /proc parsing, pid identity, tree termination,
// the supervisor, signal names, and UTF-8 tails.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <system_error>

#include "base/error.hpp"
#include "base/text.hpp"
#include "proc/pidfd.hpp"
#include "proc/process_table.hpp"
#include "proc/signals.hpp"
#include "proc/supervisor.hpp"
#include "proc/terminate.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"

extern char** environ;

using namespace team;
using namespace team::proc;
using namespace std::chrono_literals;

namespace {

// Forks `sh -c script` in a new process group, with the test's marker in its environment.
pid_t spawn_sh(const std::string& script, const team::test::Marker& mark) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::setpgid(0, 0);
        ::setenv(mark.key().c_str(), mark.value().c_str(), 1);
        ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    return pid;
}

void wait_for_processes(const team::test::Marker& mark, size_t n) {
    // A generous bound: a loaded machine (and ASan) can take seconds to start a few shells.
    REQUIRE(team::test::eventually([&] { return mark.alive().size() >= n; }));
}

}  // namespace

TEST_CASE("/proc/PID/stat is parsed after the last parenthesis", "[proc]") {
    auto self = read_process(::getpid());
    REQUIRE(self);
    CHECK(self->pid == ::getpid());
    CHECK(self->ppid == ::getppid());
    CHECK(self->pgid == ::getpgrp());
    CHECK(self->start_time > 0);
    CHECK_FALSE(read_process(0));
    CHECK_FALSE(read_process(999'999'999));

    // A command name with spaces and parentheses must not shift the fields.
    team::test::Marker mark;
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_t child = ::fork();
    if (child == 0) {
        ::prctl(15 /* PR_SET_NAME */, "a) (b c) d", 0, 0, 0);
        ::close(ready[0]);
        (void)!::write(ready[1], "x", 1);
        ::pause();
        ::_exit(0);
    }
    char c;
    REQUIRE(::read(ready[0], &c, 1) == 1);
    auto info = read_process(child);
    REQUIRE(info);
    CHECK(info->ppid == ::getpid());
    CHECK(info->state != '?');
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ::close(ready[0]);
    ::close(ready[1]);
}

TEST_CASE("descendants are found through every level", "[proc]") {
    team::test::Marker mark;
    pid_t root = spawn_sh("sleep 1000 & (sleep 1001 & wait) & wait", mark);
    wait_for_processes(mark, 4);
    auto tree = descendants(root, scan_processes());
    CHECK(tree.size() >= 3);
    for (const auto& p : tree) CHECK(p.pid != root);
    terminate_tree({root, 0, true, 0, {}}, SIGKILL, 0ms, true);
    ::waitpid(root, nullptr, 0);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("a pidfd is refused for a pid whose start time does not match", "[proc]") {
    pid_t child = ::fork();
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    auto start = start_time_of(child);
    REQUIRE(start);
    CHECK(Pidfd::open(child, *start));
    CHECK_FALSE(Pidfd::open(child, *start + 1));  // "the pid now belongs to another process"
    auto fd = Pidfd::open(child, *start);
    REQUIRE(fd);
    CHECK_FALSE(fd->exited());
    CHECK(fd->signal(SIGKILL));
    std::vector<Pidfd> fds;
    fds.push_back(std::move(*fd));
    CHECK(wait_all_exited(fds, std::chrono::steady_clock::now() + 2s));
    CHECK(fds[0].exited());  // a zombie counts as exited
    ::waitpid(child, nullptr, 0);
    CHECK_FALSE(fds[0].signal(SIGTERM));  // gone: not an error, just false
    CHECK_FALSE(Pidfd::open(child, *start));
}

TEST_CASE("a pidfd that cannot be opened for lack of descriptors is an error, not a death",
          "[proc]") {
    // Out of descriptors (EMFILE) says nothing about the process: taking it for "gone" would
    // record a live agent as lost. Checked in a child whose descriptor limit is then 0 (the soft
    // one: it is given back before the error is looked at, since UBSan's check of the object
    // needs a pipe of its own).
    pid_t child = ::fork();
    if (child == 0) {
        rlimit old{};
        if (::getrlimit(RLIMIT_NOFILE, &old) != 0) ::_exit(10);
        rlimit none{0, old.rlim_max};
        if (::setrlimit(RLIMIT_NOFILE, &none) != 0) ::_exit(10);
        try {
            auto fd = Pidfd::open(::getppid(), 0);
            ::_exit(fd ? 11 : 12);  // 12: taken for gone
        } catch (const std::system_error& e) {
            ::setrlimit(RLIMIT_NOFILE, &old);
            ::_exit(e.code().value() == EMFILE ? 0 : 13);
        }
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    // And a pid that does not exist is still simply gone.
    CHECK_FALSE(Pidfd::open(child, 0));
}

TEST_CASE("terminate_tree reaches setsid and double-forked escapees", "[proc]") {
    team::test::Marker mark;
    pid_t root = spawn_sh("setsid sleep 1000 & (sleep 1001 &); sleep 1002", mark);
    wait_for_processes(mark, 3);
    // The escapees are not below root any more: the marker finds them.
    TreeTarget target{root, 0, true, root, {mark.entry()}};
    CHECK(find_tree(target).size() >= 3);
    auto outcome = terminate_tree(target, SIGTERM, 2000ms, true);
    CHECK(outcome.signalled >= 3);
    CHECK_FALSE(outcome.force_killed);
    CHECK(outcome.survivors == 0);
    ::waitpid(root, nullptr, 0);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("terminate_tree escalates to SIGKILL after the grace, or reports survivors", "[proc]") {
    team::test::Marker mark;
    pid_t root = spawn_sh("trap '' TERM; while :; do sleep 0.05; done", mark);
    // Two: the shell and one of its sleeps, so the trap is set (the shell alone may not have
    // read it yet, and would die of the first TERM).
    wait_for_processes(mark, 2);
    TreeTarget target{root, 0, true, root, {}};
    auto start = std::chrono::steady_clock::now();
    auto gentle = terminate_tree(target, SIGTERM, 200ms, false);
    CHECK(gentle.survivors >= 1);
    CHECK_FALSE(gentle.force_killed);
    auto forced = terminate_tree(target, SIGTERM, 200ms, true);
    CHECK(forced.force_killed);
    CHECK(forced.survivors == 0);
    CHECK(std::chrono::steady_clock::now() - start < 3s);
    ::waitpid(root, nullptr, 0);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("terminate_trees ends several trees within one grace and nothing else", "[proc]") {
    team::test::Marker obeys, ignores, bystander;
    pid_t a = spawn_sh("setsid sleep 1000 & sleep 1001", obeys);
    pid_t b = spawn_sh("trap '' TERM; (sleep 1002 &); while :; do sleep 0.05; done", ignores);
    pid_t c = spawn_sh("sleep 1003", bystander);
    wait_for_processes(obeys, 2);
    wait_for_processes(ignores, 2);
    wait_for_processes(bystander, 1);
    // Found by marker alone (as a teardown finds agents whose supervisor is gone), and by group.
    std::vector<TreeTarget> targets{{0, 0, false, a, {obeys.entry()}},
                                    {0, 0, false, b, {ignores.entry()}}};
    CHECK(find_trees(targets).size() >= 4);
    size_t bystanders = bystander.alive().size();  // sleep, and sh if it did not exec
    auto start = std::chrono::steady_clock::now();
    auto outcome = terminate_trees(targets, SIGTERM, 300ms, true);
    auto took = std::chrono::steady_clock::now() - start;
    CHECK(outcome.force_killed);  // the TERM-ignoring tree needed SIGKILL
    CHECK(outcome.survivors == 0);
    CHECK(took >= 300ms);  // one grace for both trees, not one each
    CHECK(took < 3s);
    ::waitpid(a, nullptr, 0);
    ::waitpid(b, nullptr, 0);
    CHECK(obeys.none_alive_within(2000));
    CHECK(ignores.none_alive_within(2000));
    CHECK(bystander.alive().size() == bystanders);  // a process of neither tree is left alone
    ::kill(-c, SIGKILL);
    ::waitpid(c, nullptr, 0);
}

TEST_CASE("a stopped process ends on SIGTERM because SIGCONT goes with it", "[proc]") {
    team::test::Marker mark;
    pid_t root = spawn_sh("exec sleep 1000", mark);
    wait_for_processes(mark, 1);
    ::kill(root, SIGSTOP);
    auto outcome = terminate_tree({root, 0, true, 0, {}}, SIGTERM, 2000ms, true);
    CHECK_FALSE(outcome.force_killed);
    int status = 0;
    ::waitpid(root, &status, 0);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGTERM);
}

TEST_CASE("the supervisor records exit codes and signals apart and leaves nothing", "[proc]") {
    team::test::Marker mark;
    auto run = [&](std::vector<std::string> argv,
                   std::optional<std::chrono::milliseconds> timeout) {
        Supervisor supervisor;
        LaunchSpec spec;
        spec.argv = std::move(argv);
        spec.cwd = "/";
        for (char** e = environ; *e; ++e) spec.env.emplace_back(*e);
        spec.env.push_back(mark.entry());
        spec.timeout = timeout;
        spec.grace = 300ms;
        supervisor.start(spec);
        std::string output;
        auto outcome = supervisor.run([&](std::string_view s) { output += s; });
        return std::make_pair(outcome, output);
    };
    auto [exited, out1] = run({"sh", "-c", "echo hi; echo err >&2; exit 3"}, std::nullopt);
    CHECK(exited.status.exit_code == 3);
    CHECK_FALSE(exited.status.signal);
    CHECK(out1 == "hi\nerr\n");
    auto [signalled, out2] = run({"sh", "-c", "kill -9 $$"}, std::nullopt);
    CHECK(signalled.status.signal == SIGKILL);
    CHECK_FALSE(signalled.status.exit_code);
    // Leftovers of a command that ended are ended too.
    auto [leftover, out3] = run({"sh", "-c", "setsid sleep 1000 & exit 0"}, std::nullopt);
    CHECK(leftover.status.exit_code == 0);
    CHECK(mark.alive().empty());
    auto [timed, out4] = run({"sh", "-c", "trap '' TERM; echo started; sleep 1000"}, 200ms);
    CHECK(timed.timed_out);
    CHECK(timed.status.signal);
    CHECK(out4 == "started\n");
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("a command that cannot start is a clear error", "[proc]") {
    Supervisor supervisor;
    LaunchSpec spec;
    spec.cwd = "/";
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.argv = {"no-such-command-here"};
    CHECK_THROWS_WITH(supervisor.start(spec), Catch::Contains("command not found"));
    char path[] = "/tmp/team-test-noexec-XXXXXX";
    int fd = ::mkstemp(path);  // mode 0600: not executable
    REQUIRE(fd >= 0);
    ::close(fd);
    spec.argv = {path};
    CHECK_THROWS_WITH(supervisor.start(spec), Catch::Contains("not an executable"));
    ::unlink(path);
    spec.argv = {"true"};
    spec.cwd = "/no/such/dir";
    CHECK_THROWS_WITH(supervisor.start(spec), Catch::Contains("cannot change to directory"));
    CHECK(find_program("sh", "/nonexistent:/bin") == "/bin/sh");
}

TEST_CASE("signal names parse and print", "[proc]") {
    CHECK(parse_signal("SIGTERM", "--signal", true) == SIGTERM);
    CHECK(parse_signal("term", "--signal", true) == SIGTERM);
    CHECK(parse_signal("9", "--signal", true) == SIGKILL);
    CHECK(parse_signal("INT", "--signal", true) == SIGINT);
    CHECK_THROWS_AS(parse_signal("SIGSTOP", "--signal", true), Error);
    CHECK_THROWS_AS(parse_signal("SIGFOO", "--signal", true), Error);
    CHECK_THROWS_AS(parse_signal("", "--signal", true), Error);
    CHECK_THROWS_AS(parse_signal("99999", "--signal", true), Error);
    CHECK(signal_name(SIGKILL) == "SIGKILL");
    CHECK(signal_name(SIGTERM) == "SIGTERM");
    CHECK(signal_name(77) == "SIG77");
}

TEST_CASE("a UTF-8 tail never starts inside a character", "[text]") {
    std::string text = "aé€😀";  // 1 + 2 + 3 + 4 bytes
    CHECK(utf8_tail(text, 100) == text);
    CHECK(utf8_tail(text, 4) == "😀");
    CHECK(utf8_tail(text, 5) == "😀");
    CHECK(utf8_tail(text, 7) == "€😀");
    CHECK(utf8_tail(text, 3).empty());
    CHECK(utf8_tail(text, 9) == "é€😀");
    std::string binary = "\xff\xfe\x80\x80\x80\x80";
    CHECK(utf8_tail(binary, 4).size() <= 4);
}
