// The event streams of `team serve` (GET /api/events), whatever their socket: each stream is a
// Sink, and the Hub fans the activity feed's rows (http/events.hpp) out to every open one, on
// the server loop's thread only. A stream that resumes registers first and is held until its
// backlog arrives; the live rows that came meanwhile follow it, each id once. No Beast here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http/events.hpp"

namespace team::http {

// An open event stream.
struct Sink {
    virtual ~Sink() = default;
    // Queues a frame (or a comment) for the stream; the text is shared by every stream.
    virtual void send(std::shared_ptr<const std::string> text) = 0;
    virtual void close() = 0;

    std::optional<std::string> only_team;  // ?team=
    bool catching_up = false;              // its backlog has not arrived yet
    std::int64_t last_sent = 0;            // rows up to here were sent
    std::vector<Event> held;               // live rows that came while catching up
};

class Hub {
  public:
    std::uint64_t add(std::shared_ptr<Sink> sink);
    void remove(std::uint64_t id);
    std::size_t size() const { return sinks_.size(); }

    // New rows (stream 0: for all) or one stream's backlog.
    void deliver(std::uint64_t stream, const std::vector<Event>& events);
    // A comment to every stream, so proxies and clients see it alive.
    void keep_alive();
    void close_all();

  private:
    static bool wants(const Sink& s, const Event& e);
    void send(Sink& s, const std::vector<Event>& events);

    std::uint64_t next_ = 0;
    std::map<std::uint64_t, std::shared_ptr<Sink>> sinks_;
};

}  // namespace team::http
