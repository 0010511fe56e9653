// The terminal/* methods as the host serves them (SPEC 15): the client turns the agent's
// requests into calls on a Terminals, which the host implements (the next step maps them to
// team's background shells, shells/). LocalTerminals is a simple one of our own, for the tests
// and for a host without a store: each terminal a child in its own process group, its stdin
// /dev/null, PAGER=cat, its output kept in memory from the end.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "acp/child.hpp"

namespace team::acp {

struct TerminalSpec {
    std::string command;
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> env;
    std::filesystem::path cwd;  // absolute; the session's cwd when absent
    std::optional<std::uint64_t> output_byte_limit;
};

struct TerminalOutput {
    std::string output;
    bool truncated = false;
    std::optional<ExitStatus> exit;  // once it has ended
};

class Terminals {
  public:
    virtual ~Terminals() = default;
    // Starts the command; returns its terminal id. Throws team::Error when it cannot start.
    virtual std::string create(const TerminalSpec& spec) = 0;
    // Its output so far (the tail, up to its byte limit) and its exit status once ended. Throws
    // team::Error (not_found) for an unknown or released id, here and below.
    virtual TerminalOutput output(const std::string& id) = 0;
    // Blocks until the command has ended (or the terminal is released: then not_found).
    virtual ExitStatus wait_for_exit(const std::string& id) = 0;
    // Ends the command's whole tree; the terminal stays, its output and status readable.
    virtual void kill(const std::string& id) = 0;
    // Ends the command if it still runs and forgets the terminal.
    virtual void release(const std::string& id) = 0;
    // Releases every terminal (the agent's connection has ended).
    virtual void release_all() = 0;
};

// The last `limit` bytes of `text` or fewer, starting on a UTF-8 character boundary (the
// protocol: truncate from the beginning, at a character boundary). `truncated` is set when
// anything was cut.
std::string utf8_tail(std::string_view text, std::uint64_t limit, bool& truncated);

class LocalTerminals final : public Terminals {
  public:
    ~LocalTerminals() override;
    std::string create(const TerminalSpec& spec) override;
    TerminalOutput output(const std::string& id) override;
    ExitStatus wait_for_exit(const std::string& id) override;
    void kill(const std::string& id) override;
    void release(const std::string& id) override;
    void release_all() override;
    // How many terminals are held (released ones are not).
    std::size_t size();

  private:
    struct Terminal {
        Child child;
        std::optional<std::uint64_t> limit;
        std::string output;  // the tail, kept under twice the limit
        bool cut = false;    // something was dropped from its start
        std::optional<ExitStatus> exit;
        bool released = false;
        bool eof = false;  // the reader has seen the end of its output
        std::thread reader, waiter;
    };
    std::shared_ptr<Terminal> find(const std::string& id);
    void finish(const std::shared_ptr<Terminal>& t);
    std::mutex mutex_;
    std::condition_variable changed_;
    std::map<std::string, std::shared_ptr<Terminal>> terminals_;
    std::uint64_t next_ = 1;
};

}  // namespace team::acp
