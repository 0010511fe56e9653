#include "http/events.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "base/cancel.hpp"
#include "ops/changes.hpp"

namespace team::http {

namespace {

constexpr int kBacklogLimit = 10000;
constexpr int kBatch = 1000;

std::vector<Event> rows_after(ops::Core& core, std::int64_t since, int limit) {
    std::vector<Event> out;
    for (auto& r : core.activity_after(since, limit)) {
        out.push_back({r.id, std::move(r.type), std::move(r.team),
                       r.row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
    }
    return out;
}

}  // namespace

std::string frame(const Event& e) {
    // No `event:` line: a browser's EventSource hands an unnamed event to its one `message`
    // listener, so a type added later reaches the page as well; the type is in the data. The
    // data is one line of JSON, so no field can end a frame.
    return "id: " + std::to_string(e.id) + "\ndata: " + e.data + "\n\n";
}

struct ActivityFeed::State {
    ops::Identity identity;
    Deliver deliver;
    int wake_fd = -1;  // a backlog was asked for
    int stop_fd = -1;
    std::atomic<bool> stopping{false};
    std::mutex mutex;
    std::vector<std::pair<std::uint64_t, std::int64_t>> asked;  // under mutex
    std::thread thread;

    void run() {
        set_thread_cancel_fd(stop_fd);
        try {
            ops::Core core(identity);
            auto changes = core.watch_changes();  // watch first, then look: no commit slips by
            std::int64_t cursor = core.newest_activity_id();
            while (!stopping) {
                std::vector<std::pair<std::uint64_t, std::int64_t>> now;
                {
                    std::lock_guard lock(mutex);
                    now.swap(asked);
                }
                std::uint64_t drained = 0;
                ssize_t n = ::read(wake_fd, &drained, sizeof drained);
                (void)n;
                for (const auto& [stream, since] : now) {
                    deliver(stream, rows_after(core, since, kBacklogLimit));
                }
                for (;;) {
                    auto fresh = rows_after(core, cursor, kBatch);
                    if (fresh.empty()) break;
                    cursor = fresh.back().id;
                    bool more = fresh.size() == static_cast<std::size_t>(kBatch);
                    deliver(0, std::move(fresh));
                    if (!more) break;
                }
                changes->wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(60),
                                    {wake_fd});
            }
        } catch (const WaitCancelled&) {
            // stopped
        } catch (const std::exception& e) {
            // A store that cannot be read: the streams stay open with their keep-alives; the
            // API answers the same error on its own.
            std::fprintf(stderr, "team serve: the event feed stopped: %s\n", e.what());
        }
        set_thread_cancel_fd(-1);
    }
};

ActivityFeed::ActivityFeed(ops::Identity identity, Deliver deliver)
    : state_(std::make_unique<State>()) {
    state_->identity = std::move(identity);
    state_->deliver = std::move(deliver);
    state_->wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    state_->stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    state_->thread = std::thread([s = state_.get()] { s->run(); });
}

ActivityFeed::~ActivityFeed() {
    stop();
    ::close(state_->wake_fd);
    ::close(state_->stop_fd);
}

void ActivityFeed::backlog(std::uint64_t stream, std::int64_t since) {
    {
        std::lock_guard lock(state_->mutex);
        state_->asked.emplace_back(stream, since);
    }
    std::uint64_t one = 1;
    ssize_t n = ::write(state_->wake_fd, &one, sizeof one);
    (void)n;
}

void ActivityFeed::stop() {
    state_->stopping = true;
    std::uint64_t one = 1;
    ssize_t n = ::write(state_->stop_fd, &one, sizeof one);
    (void)n;
    if (state_->thread.joinable()) state_->thread.join();
}

}  // namespace team::http
