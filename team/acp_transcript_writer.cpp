// The ACP host's transcript, stored and drawn as it grows (team/acp_transcript_writer.hpp).
#include "team/acp_transcript_writer.hpp"

#include <cstdio>
#include <exception>

#include "acp/transcript.hpp"
#include "state/acp_rows.hpp"
#include "state/activity.hpp"

namespace team {

using nlohmann::json;

void print_in_pane(const std::string& text) {
    if (text.empty()) return;
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

TranscriptWriter::TranscriptWriter(Store& store, std::mutex& store_mutex, std::int64_t team_id,
                                   std::int64_t agent_id, std::string actor)
    : store_(store),
      store_mutex_(store_mutex),
      team_id_(team_id),
      agent_id_(agent_id),
      actor_(std::move(actor)) {}

TranscriptWriter::~TranscriptWriter() {
    stop();
}

void TranscriptWriter::start(const acp::Client& client, std::int64_t first_seq) {
    client_ = &client;
    first_seq_ = first_seq;
    thread_ = std::thread([this] { write_loop(); });
}

void TranscriptWriter::dirty() {
    std::lock_guard lock(mutex_);
    dirty_ = true;
    changed_.notify_all();
}

void TranscriptWriter::note(const std::string& line) {
    std::lock_guard lock(mutex_);
    notes_.push_back(line);
    dirty_ = true;
    changed_.notify_all();
}

void TranscriptWriter::stop() {
    {
        std::lock_guard lock(mutex_);
        if (!thread_.joinable()) return;
        stopping_ = true;
        changed_.notify_all();
    }
    thread_.join();
}

// Whatever changed since the last batch, one transaction, and the same drawn in the pane; at
// most one batch per kTranscriptPace.
void TranscriptWriter::write_loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] { return dirty_ || stopping_; });
        bool last = stopping_;
        dirty_ = false;
        lock.unlock();
        flush();
        draw_notes();
        lock.lock();
        if (last && !dirty_) return;
        changed_.wait_for(lock, kTranscriptPace, [&] { return stopping_; });
    }
}

void TranscriptWriter::flush() {
    std::lock_guard flushing(flush_mutex_);
    if (!client_) return;
    json records = client_->transcript_records();
    std::vector<std::pair<std::size_t, json>> changed;
    for (std::size_t i = 0; i < records.size(); ++i) {
        std::string text = records[i].dump();
        if (i < written_.size() && written_[i] == text) continue;
        changed.emplace_back(i, records[i]);
        if (i < written_.size())
            written_[i] = std::move(text);
        else
            written_.push_back(std::move(text));
    }
    if (changed.empty()) return;
    try {
        std::lock_guard storing(store_mutex_);
        store_.write([&] {
            for (const auto& [seq, record] : changed)
                put_acp_transcript(store_, agent_id_, first_seq_ + static_cast<std::int64_t>(seq),
                                   record);
            append_activity(store_.db(), team_id_, clock_.now(), actor_, "acp_transcript",
                            {{"agentId", actor_}, {"entries", records.size()}});
        });
    } catch (const std::exception& e) {
        // Kept in memory; the next batch writes it again.
        for (const auto& [seq, record] : changed) written_[seq].clear();
        print_in_pane(std::string("team: the transcript could not be stored: ") + e.what() + "\n");
    }
    draw(changed);
}

void TranscriptWriter::draw(const std::vector<std::pair<std::size_t, json>>& changed) {
    std::lock_guard lock(draw_mutex_);
    std::string out;
    for (const auto& [seq, record] : changed) {
        std::string text = acp::render_record(record);
        if (seq >= drawn_.size()) drawn_.resize(seq + 1);
        std::string& before = drawn_[seq];
        bool growing = seq == last_drawn_ && !before.empty() && !lines_between_ &&
                       text.compare(0, before.size() - 1, before, 0, before.size() - 1) == 0;
        if (growing && before.back() == '\n' && text.size() >= before.size()) {
            // The record's text grew: what is new, after the newline render put at its end.
            out += text.substr(before.size() - 1);
            if (!out.empty() && out.back() == '\n') out.pop_back();
            out_pending_newline_ = true;
        } else {
            if (out_pending_newline_) out += "\n";
            out += text;
            if (!out.empty() && out.back() == '\n') {
                out.pop_back();
                out_pending_newline_ = true;
            }
        }
        before = text;
        last_drawn_ = seq;
    }
    lines_between_ = false;
    print_in_pane(out);
}

void TranscriptWriter::draw_notes() {
    std::vector<std::string> notes;
    {
        std::lock_guard lock(mutex_);
        notes.swap(notes_);
    }
    if (notes.empty()) return;
    std::lock_guard lock(draw_mutex_);
    std::string out = out_pending_newline_ ? "\n" : "";
    for (const auto& n : notes) out += n + "\n";
    out_pending_newline_ = false;
    lines_between_ = true;
    print_in_pane(out);
}

}  // namespace team
