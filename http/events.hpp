// The live feed of `team serve` (SPEC 13, GET /api/events): ONE thread that waits for the store's
// changes through the core (ops/changes.hpp), reads the activity rows committed since its last
// look, by any process, once per commit, and hands them to the server, which fans them out to every
// open stream. A stream that resumes (Last-Event-ID) asks this thread for what it missed, so the
// rows it gets before and after are read by one reader in order. No Beast here.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/core.hpp"

namespace team::http {

// One activity row as an event: `id:` and `data:` of the stream (the row, whose `type` says what
// happened), and its team (none for an entry of the home) for ?team= filters.
struct Event {
    std::int64_t id = 0;
    std::string type;
    std::optional<std::string> team;
    std::string data;  // the row's JSON ({id, at, actor, type, details, team}), one line
};

// The whole frame of an event ("id: ..\ndata: ..\n\n"): unnamed, so that EventSource gives
// every type to one listener.
std::string frame(const Event& event);

class ActivityFeed {
  public:
    // Called on the feed's thread: new rows for every stream (`stream` 0), or the rows after a
    // resuming stream's id (`stream` its number). The server posts them to its loop.
    using Deliver = std::function<void(std::uint64_t stream, std::vector<Event> events)>;

    // Reads the home of `identity`.
    ActivityFeed(ops::Identity identity, Deliver deliver);
    ~ActivityFeed();  // stops and joins the thread
    ActivityFeed(const ActivityFeed&) = delete;
    ActivityFeed& operator=(const ActivityFeed&) = delete;

    // Asks for the rows after `since` for `stream` (at most 10000), delivered before any later
    // live row. Thread-safe.
    void backlog(std::uint64_t stream, std::int64_t since);

    void stop();

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace team::http
