// The Host of a hosted ACP agent (acp/host.hpp) over the store, for team/acp_host.cpp: what
// the client cannot decide, written where the verbs and the faces read it. A permission request
// becomes a row and a message to the leader, its close the row's end; a turn's start and end
// (a turn is a row of `acp_turns`, mapped to the client's turn number when queued) update the
// row; an automatic answer or a write is an activity entry; needs_auth is recorded and the
// leader told; the transcript goes through the TranscriptWriter. The end of the connection is
// kept and wakes the main loop through an eventfd. Every store access holds `store_mutex_`
// (the client calls from its reader and worker threads; the main loop reads too).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "acp/client.hpp"
#include "base/time.hpp"
#include "state/records.hpp"
#include "state/store.hpp"
#include "team/acp_shell_terminals.hpp"
#include "team/acp_transcript_writer.hpp"

namespace team {

class StoreHost final : public acp::Host {
  public:
    StoreHost(Store& store, const TeamRecord& team, const AgentRecord& agent);
    ~StoreHost() override;
    StoreHost(const StoreHost&) = delete;
    StoreHost& operator=(const StoreHost&) = delete;

    // Starts the transcript's writer on `client`, its entries stored from `first_seq` on.
    void attach(acp::Client& client, std::int64_t first_seq);

    // The main loop's wake-up besides the store: the agent ended, or the writer has news.
    int wake_fd() const { return wake_; }
    bool ended() const;
    std::string end_reason() const;

    // Runs `fn` holding the store's mutex.
    template <class Fn>
    auto with_store(Fn&& fn) -> decltype(fn()) {
        std::lock_guard lock(store_mutex_);
        return fn();
    }

    // Queues a turn on the client, for its row. The client may start it before prompt()
    // returns: turn_row() waits on prompt_mutex_ for the number to be mapped.
    void prompt(acp::Client& client, const std::string& text, std::int64_t row);

    // A line of the host's own in the pane, below the transcript as it stands.
    void note(const std::string& line) { writer_.note(line); }
    // Writes the rest of the transcript and stops the writer.
    void stop_writer() { writer_.stop(); }

    void permission_requested(const acp::PermissionRequest& request) override;
    void permission_closed(std::int64_t number, const std::string& how) override;
    acp::Terminals& terminals() override { return terminals_; }
    void turn_started(int number) override;
    void turn_ended(int number, const acp::TurnResult& result) override;
    void updated(const acp::Update& update) override;
    void activity(const std::string& what) override;
    void needs_auth(const std::vector<acp::AuthMethod>& methods) override;
    void ended(const std::string& reason) override;

  private:
    std::optional<std::int64_t> turn_row(int number);

    Store& store_;
    TeamRecord team_;
    AgentRecord agent_;
    SystemClock clock_;
    ShellTerminals terminals_;
    int wake_ = -1;
    std::mutex store_mutex_;
    TranscriptWriter writer_;

    mutable std::mutex mutex_;  // below
    std::map<int, std::int64_t> turn_rows_;
    bool ended_ = false;
    std::string end_reason_;
    std::optional<double> last_cost_;  // the agent's cost as last stored (usage_update)
    std::mutex prompt_mutex_;          // a turn queued and mapped to its row, as one
};

}  // namespace team
