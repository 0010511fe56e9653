#include "http/hub.hpp"

namespace team::http {

std::uint64_t Hub::add(std::shared_ptr<Sink> sink) {
    auto id = ++next_;
    sinks_[id] = std::move(sink);
    return id;
}

void Hub::remove(std::uint64_t id) {
    sinks_.erase(id);
}

void Hub::deliver(std::uint64_t stream, const std::vector<Event>& events) {
    if (stream != 0) {
        auto it = sinks_.find(stream);
        if (it == sinks_.end()) return;
        Sink& s = *it->second;
        s.catching_up = false;
        send(s, events);
        auto held = std::move(s.held);
        send(s, held);
        return;
    }
    // One frame per row, shared by every stream that takes it.
    std::vector<std::shared_ptr<const std::string>> frames;
    frames.reserve(events.size());
    for (const auto& e : events) frames.push_back(std::make_shared<std::string>(frame(e)));
    for (auto& [_, sink] : sinks_) {
        Sink& s = *sink;
        if (s.catching_up) {
            s.held.insert(s.held.end(), events.begin(), events.end());
            continue;
        }
        for (std::size_t i = 0; i < events.size(); ++i) {
            if (!wants(s, events[i])) continue;
            s.last_sent = events[i].id;
            s.send(frames[i]);
        }
    }
}

void Hub::keep_alive() {
    auto comment = std::make_shared<const std::string>(": keep-alive\n\n");
    for (auto& [_, s] : sinks_) s->send(comment);
}

void Hub::close_all() {
    auto all = std::move(sinks_);
    for (auto& [_, s] : all) s->close();
}

bool Hub::wants(const Sink& s, const Event& e) {
    if (e.id <= s.last_sent) return false;
    return !s.only_team || (e.team && *e.team == *s.only_team);
}

void Hub::send(Sink& s, const std::vector<Event>& events) {
    for (const auto& e : events) {
        if (!wants(s, e)) continue;
        s.last_sent = e.id;
        s.send(std::make_shared<std::string>(frame(e)));
    }
}

}  // namespace team::http
