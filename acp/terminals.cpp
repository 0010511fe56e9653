#include "acp/terminals.hpp"

#include <unistd.h>

#include <cerrno>

#include "base/error.hpp"

namespace team::acp {

using namespace std::chrono_literals;

std::string utf8_tail(std::string_view text, std::uint64_t limit, bool& truncated) {
    truncated = false;
    if (text.size() <= limit) return std::string(text);
    truncated = true;
    std::size_t start = text.size() - limit;
    // A continuation byte (10xxxxxx) is the middle of a character: move past it.
    while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
    return std::string(text.substr(start));
}

LocalTerminals::~LocalTerminals() {
    release_all();
}

std::string LocalTerminals::create(const TerminalSpec& spec) {
    ChildSpec cs;
    cs.argv.push_back(spec.command);
    cs.argv.insert(cs.argv.end(), spec.args.begin(), spec.args.end());
    cs.cwd = spec.cwd;
    cs.env.push_back("PAGER=cat");
    for (const auto& [k, v] : spec.env) cs.env.push_back(k + "=" + v);
    cs.pipe_stdin = false;
    cs.merge_stderr = true;
    auto t = std::make_shared<Terminal>();
    t->child = start_child(cs);
    t->limit = spec.output_byte_limit;
    std::string id;
    {
        std::lock_guard lock(mutex_);
        id = "term-" + std::to_string(next_++);
        terminals_[id] = t;
    }
    t->reader = std::thread([this, t] {
        char buffer[65536];
        for (;;) {
            ssize_t n = ::read(t->child.out, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            std::lock_guard lock(mutex_);
            t->output.append(buffer, static_cast<std::size_t>(n));
            // Only the tail is ever handed out: drop the head once it is twice the limit, so
            // a command that prints without end costs memory in proportion to its limit.
            if (t->limit && t->output.size() > 2 * *t->limit + 4) {
                t->output.erase(0, t->output.size() - *t->limit - 4);
                t->cut = true;
            }
        }
        ::close(t->child.out);
        std::lock_guard lock(mutex_);
        t->child.out = -1;
        t->eof = true;
        changed_.notify_all();
    });
    t->waiter = std::thread([this, t] {
        ExitStatus status = *wait_child(t->child.pid, std::nullopt);
        std::unique_lock lock(mutex_);
        // Its last output first, so that an exit status always comes with all the output
        // before it; a grandchild that keeps the pipe open is not waited for long.
        changed_.wait_for(lock, 500ms, [&] { return t->eof; });
        t->exit = status;
        changed_.notify_all();
    });
    return id;
}

std::shared_ptr<LocalTerminals::Terminal> LocalTerminals::find(const std::string& id) {
    auto it = terminals_.find(id);
    if (it == terminals_.end()) throw not_found("no terminal " + quote(id));
    return it->second;
}

TerminalOutput LocalTerminals::output(const std::string& id) {
    std::lock_guard lock(mutex_);
    auto t = find(id);
    TerminalOutput out;
    if (t->limit) {
        out.output = utf8_tail(t->output, *t->limit, out.truncated);
        out.truncated = out.truncated || t->cut;
    } else {
        out.output = t->output;
    }
    out.exit = t->exit;
    return out;
}

ExitStatus LocalTerminals::wait_for_exit(const std::string& id) {
    std::unique_lock lock(mutex_);
    auto t = find(id);
    changed_.wait(lock, [&] { return t->exit.has_value() || t->released; });
    if (!t->exit) throw not_found("terminal " + quote(id) + " was released");
    return *t->exit;
}

void LocalTerminals::kill(const std::string& id) {
    std::shared_ptr<Terminal> t;
    {
        std::lock_guard lock(mutex_);
        t = find(id);
        if (t->exit) return;
    }
    end_child_tree(t->child, "", 2s);
}

void LocalTerminals::finish(const std::shared_ptr<Terminal>& t) {
    bool running;
    {
        std::lock_guard lock(mutex_);
        running = !t->exit.has_value();
        t->released = true;
        changed_.notify_all();
    }
    if (running) end_child_tree(t->child, "", 2s);
    if (t->waiter.joinable()) t->waiter.join();
    if (t->reader.joinable()) t->reader.join();
}

void LocalTerminals::release(const std::string& id) {
    std::shared_ptr<Terminal> t;
    {
        std::lock_guard lock(mutex_);
        t = find(id);
        terminals_.erase(id);
    }
    finish(t);
}

void LocalTerminals::release_all() {
    std::map<std::string, std::shared_ptr<Terminal>> all;
    {
        std::lock_guard lock(mutex_);
        all.swap(terminals_);
    }
    for (auto& [id, t] : all) finish(t);
}

std::size_t LocalTerminals::size() {
    std::lock_guard lock(mutex_);
    return terminals_.size();
}

}  // namespace team::acp
