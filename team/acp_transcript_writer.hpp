// The transcript of a hosted ACP agent (SPEC 15) as it grows, for its host (team/acp_host.hpp):
// whatever changed in the client's transcript is written to the store in batches, at most one
// per kTranscriptPace (one transaction each, one `acp_transcript` activity entry each), and
// drawn in the agent's pane, with the host's own lines (notes) below what led to them. The
// writer is a thread of its own, woken by dirty() and note(); flush() runs on a caller's thread
// too (a turn's end: its whole transcript is stored before the turn is recorded ended).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "acp/client.hpp"
#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

// How often at most the transcript is written while it streams.
inline constexpr std::chrono::milliseconds kTranscriptPace{100};

// Writes `text` to the pane (the host's stdout) at once.
void print_in_pane(const std::string& text);

class TranscriptWriter {
  public:
    // Every store access holds `store_mutex` (the host's other callbacks share the store).
    TranscriptWriter(Store& store, std::mutex& store_mutex, std::int64_t team_id,
                     std::int64_t agent_id, std::string actor);
    ~TranscriptWriter();  // stop()
    TranscriptWriter(const TranscriptWriter&) = delete;
    TranscriptWriter& operator=(const TranscriptWriter&) = delete;

    // Starts the writer on `client`'s transcript, its first entry stored at `first_seq`: after
    // the entries an earlier session of the agent left (a resume), which stay as they were.
    void start(const acp::Client& client, std::int64_t first_seq);
    // The transcript changed: the writer writes and draws it within kTranscriptPace.
    void dirty();
    // A line of the host's own in the pane, drawn by the writer after the transcript as it
    // stands (so a permission request shows below what led to it).
    void note(const std::string& line);
    // Writes and draws what changed, now, on the caller's thread.
    void flush();
    // Writes the rest and stops the writer. Idempotent.
    void stop();

  private:
    void write_loop();
    // The pane: a record that grew at its end gets only what was added; any other change is
    // drawn whole, on lines of its own.
    void draw(const std::vector<std::pair<std::size_t, nlohmann::json>>& changed);
    void draw_notes();

    Store& store_;
    std::mutex& store_mutex_;
    std::int64_t team_id_, agent_id_;
    std::string actor_;
    SystemClock clock_;
    const acp::Client* client_ = nullptr;
    std::int64_t first_seq_ = 0;

    std::mutex mutex_;  // below
    std::condition_variable changed_;
    std::vector<std::string> notes_;
    bool dirty_ = false, stopping_ = false;
    std::thread thread_;

    std::mutex flush_mutex_;  // written_ and drawn_: one flush at a time
    // What was written and drawn.
    std::vector<std::string> written_, drawn_;
    std::size_t last_drawn_ = 0;
    std::mutex draw_mutex_;  // the pane's lines: the records' and the notes'
    bool out_pending_newline_ = false;
    bool lines_between_ = false;  // a note came after the last record drawn
};

}  // namespace team
