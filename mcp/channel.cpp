#include "mcp/channel.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "base/cancel.hpp"
#include "jsonrpc/codec.hpp"
#include "ops/changes.hpp"
#include "ops/operation.hpp"

namespace team::mcp {

namespace {

std::string text_of(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_null()) return "";
    return v.dump();
}

}  // namespace

struct InboxPush::State {
    ops::Identity identity;
    Send send;
    int stop_fd = -1;
    std::atomic<bool> stopping{false};
    std::thread thread;
    std::int64_t cursor = 0;

    // The caller's inbox after `since` (all of it when null); null when it cannot be read (no
    // store, no team yet, not a member).
    std::optional<nlohmann::json> read(ops::Core& core, std::optional<std::int64_t> since) {
        const ops::Operation* inbox = ops::find_command("inbox");
        if (!inbox || !core.has_store()) return std::nullopt;
        nlohmann::json values = nlohmann::json::object();
        if (since) values["since"] = *since;
        ops::Result r = ops::invoke(core, *inbox, values, ops::Naming::json);
        if (!r.ok() || !r.doc.is_array()) return std::nullopt;
        return r.doc;
    }

    void push(const nlohmann::json& messages, bool only_unread) {
        for (const auto& m : messages) {
            if (m.contains("id") && m["id"].is_number_integer()) {
                cursor = std::max(cursor, m["id"].get<std::int64_t>());
            }
            if (only_unread && !m.value("readAt", nlohmann::json()).is_null()) continue;
            send(notification_for(m));
        }
    }

    void run() {
        set_thread_cancel_fd(stop_fd);
        try {
            ops::Core core(identity);
            bool started = false;
            std::unique_ptr<ops::Changes> changes;
            bool for_messages = false;  // whether `changes` wakes only for stored messages
            while (!stopping) {
                // Until the inbox has been read, any commit may make it readable (the team
                // created, the caller spawned); after, only a stored message adds to it, and
                // the other commits of a busy store (a claim a millisecond) wake nobody here.
                // Each watch is made before the look it guards.
                if (core.has_store() && (!changes || (started && !for_messages))) {
                    changes = core.watch_changes(started);
                    for_messages = started;
                }
                if (!started) {
                    // The whole inbox once: what is unread is pushed, the newest id kept.
                    if (auto all = read(core, std::nullopt)) {
                        push(*all, true);
                        started = true;
                        continue;  // to the watch of messages, then a look after the newest
                    }
                } else if (auto later = read(core, cursor)) {
                    push(*later, false);
                }
                auto deadline =
                    std::chrono::steady_clock::now() + std::chrono::seconds(changes ? 60 : 1);
                if (changes) {
                    changes->wait_until(deadline);
                } else {
                    // No store yet (a home without a team): look again in a second.
                    pollfd p{stop_fd, POLLIN, 0};
                    if (::poll(&p, 1, 1000) > 0) break;
                }
            }
        } catch (const WaitCancelled&) {
            // stopped
        } catch (const std::exception&) {
            // The push is a convenience: inbox_read still gives every message.
        }
        set_thread_cancel_fd(-1);
    }
};

InboxPush::InboxPush(ops::Identity identity, Send send) : state_(std::make_unique<State>()) {
    state_->identity = std::move(identity);
    state_->send = std::move(send);
    state_->stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    state_->thread = std::thread([s = state_.get()] { s->run(); });
}

InboxPush::~InboxPush() {
    stop();
    if (state_->stop_fd >= 0) ::close(state_->stop_fd);
}

void InboxPush::stop() {
    state_->stopping = true;
    std::uint64_t one = 1;
    ssize_t n = ::write(state_->stop_fd, &one, sizeof one);
    (void)n;
    if (state_->thread.joinable()) state_->thread.join();
}

nlohmann::json InboxPush::notification_for(const nlohmann::json& m) {
    // meta: identifiers as keys and strings as values, as Claude Code takes them. No `source`:
    // Claude Code sets that attribute of its <channel> tag itself, from the server's name.
    nlohmann::json meta = {{"message_id", text_of(m.value("id", nlohmann::json()))},
                           {"from", text_of(m.value("from", nlohmann::json()))},
                           {"type", text_of(m.value("type", nlohmann::json()))},
                           {"team", text_of(m.value("team", nlohmann::json()))}};
    const auto& data = m.value("data", nlohmann::json());
    if (data.is_object() && data.contains("requestId")) {
        meta["request_id"] = text_of(data["requestId"]);
    }
    std::string content = text_of(m.value("text", nlohmann::json()));
    if (meta["type"] == "shutdown_request") {
        content +=
            "\n(A shutdown request: answer it with the tool shutdown_respond, action "
            "approve then confirm, or reject with a reason.)";
    }
    return jsonrpc::notification("notifications/claude/channel",
                                 {{"content", content}, {"meta", meta}});
}

}  // namespace team::mcp
