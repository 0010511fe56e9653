// What a coding agent spent, read from its own records (SPEC 18, docs/usage-records.md): each
// model call's tokens as the agent wrote them down, keyed so that reading them again adds
// nothing, and a cursor that says where the next read starts. The caller keeps entries by
// (agent, key) with INSERT OR IGNORE and the cursor in the same transaction: a second read, a
// restart or a file read again from its start never counts a call twice.
//
//   claude   the transcript (JSONL, `transcript_path` of every hook): an assistant entry's
//            `message.usage`, one entry per content block, all with the same `message.id`
//   codex    the rollout (JSONL, `transcript_path` of its hooks): `token_count` events carry the
//            thread's running total, turned here into one delta per event; `turn_context` the model
//   gemini   the chat file (`transcript_path` of its hooks): JSONL since 0.61 (message records,
//            repeated when updated, `$set` and `$rewindTo` records), one JSON document before
//            (`.json`: read whole whenever it changed); a message's `tokens`
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace team {

// One model call's tokens as an agent recorded it, keyed so that reading it again adds nothing.
struct UsageEntry {
    std::string key;          // unique for the agent: Claude `message.id`, Gemini the message
                              // id, Codex "<rollout file name>#<total_tokens at that event>"
    std::string model;        // "" when the record does not say
    std::int64_t at = 0;      // epoch ms of the entry (its timestamp; 0 when none)
    std::int64_t input = 0;   // input tokens not counting cache reads and writes
    std::int64_t output = 0;  // output tokens (reasoning, thoughts included)
    std::int64_t cache_read = 0;
    std::int64_t cache_write = 0;
};

struct RecordsRead {
    std::vector<UsageEntry> entries;  // new since the cursor, in the record's order
    nlohmann::json cursor;            // where the next read starts (opaque to the caller)
};

// Reads what the agent's own record `path` of `kind` ("claude", "codex" or "gemini") holds past
// `cursor` (null: from the start). A line is read only once a newline ends it. A file that did
// not change since the cursor costs one stat(); a file replaced or cut shorter is read again
// from its start (the keys make that add nothing). A missing or unreadable file: no entries and
// the cursor unchanged. Lines that are not what they should be are skipped, never thrown.
RecordsRead read_usage_records(std::string_view kind, const std::filesystem::path& path,
                               const nlohmann::json& cursor);

}  // namespace team
