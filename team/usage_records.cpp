#include "team/usage_records.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <fstream>
#include <functional>
#include <iterator>
#include <unordered_set>

#include "base/json_skim.hpp"

namespace team {

using nlohmann::json;

namespace {

// What stat() says of a record: enough to tell that it did not change, or that it was replaced.
struct FileState {
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t inode = 0;
};

bool stat_file(const std::filesystem::path& path, FileState& out) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    out.size = static_cast<std::int64_t>(st.st_size);
    out.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    out.inode = static_cast<std::int64_t>(st.st_ino);
    return true;
}

std::int64_t int_of(const json& doc, const char* key) {
    if (!doc.is_object()) return 0;
    auto it = doc.find(key);
    if (it == doc.end() || !it->is_number()) return 0;
    return it->is_number_float() ? static_cast<std::int64_t>(it->get<double>())
                                 : it->get<std::int64_t>();
}

std::string text_of(const json& doc, const char* key) {
    if (!doc.is_object()) return "";
    auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : "";
}

const json& object_at(const json& doc, const char* key) {
    static const json none;
    if (!doc.is_object()) return none;
    auto it = doc.find(key);
    return it != doc.end() && it->is_object() ? *it : none;
}

// "2026-11-29T02:45:49.391Z", any number of fraction digits or none: epoch ms (0: not a time).
std::int64_t epoch_ms(std::string_view text) {
    auto digits = [&](std::size_t at, std::size_t n, int& out) {
        if (at + n > text.size()) return false;
        auto [end, error] = std::from_chars(text.data() + at, text.data() + at + n, out);
        return error == std::errc() && end == text.data() + at + n;
    };
    std::tm tm{};
    if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != 'T' ||
        text[13] != ':' || text[16] != ':' || !digits(0, 4, tm.tm_year) ||
        !digits(5, 2, tm.tm_mon) || !digits(8, 2, tm.tm_mday) || !digits(11, 2, tm.tm_hour) ||
        !digits(14, 2, tm.tm_min) || !digits(17, 2, tm.tm_sec)) {
        return 0;
    }
    std::int64_t millis = 0;
    std::size_t i = 19;
    if (i < text.size() && text[i] == '.') {
        int n = 0;
        for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++n) {
            if (n < 3) millis = millis * 10 + (text[i] - '0');
        }
        for (; n < 3; ++n) millis *= 10;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return static_cast<std::int64_t>(timegm(&tm)) * 1000 + millis;
}

constexpr std::size_t kMaxLine = 64u << 20;

// One reading of a JSONL record from a byte offset: every whole line past it, handed to `line`;
// `offset` ends after the last newline read. False when the file could not be opened.
bool read_lines(const std::filesystem::path& path, std::int64_t& offset,
                const std::function<void(std::string_view)>& line) {
    // (Non-blocking: a record swapped for a FIFO after its stat() never hangs the reader.)
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    std::string buffer;
    std::vector<char> chunk(1 << 20);
    std::int64_t at = offset;  // the file offset of buffer[0]
    for (;;) {
        ssize_t n =
            ::pread(fd, chunk.data(), chunk.size(), at + static_cast<std::int64_t>(buffer.size()));
        if (n <= 0) break;
        buffer.append(chunk.data(), static_cast<std::size_t>(n));
        std::size_t start = 0;
        for (std::size_t end; (end = buffer.find('\n', start)) != std::string::npos;
             start = end + 1) {
            line(std::string_view(buffer).substr(start, end - start));
        }
        buffer.erase(0, start);
        at += static_cast<std::int64_t>(start);
        // No record's line is this long: what a hook named is not a record (a log, a binary).
        // Stepped over, so that the reader's memory stays bounded; what follows its next
        // newline is read as lines again.
        if (buffer.size() > kMaxLine) {
            at += static_cast<std::int64_t>(buffer.size());
            buffer.clear();
        }
    }
    ::close(fd);
    offset = at;
    return true;
}

json parse(std::string_view line) {
    return json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
}

// Claude Code: {"type":"assistant","timestamp":…,"message":{"id","model","usage":{input_tokens,
// output_tokens, cache_creation_input_tokens, cache_read_input_tokens}}}, one per content block.
void claude_line(std::string_view line, std::vector<UsageEntry>& out) {
    if (line.find("\"assistant\"") == std::string_view::npos ||
        line.find("\"usage\"") == std::string_view::npos) {
        return;
    }
    std::string type, timestamp;
    UsageEntry u;
    JsonSkim skim(line);
    bool ok = skim.object([&](std::string_view key) {
        if (key == "type") return skim.string(type);
        if (key == "timestamp") return skim.string(timestamp);
        if (key != "message") return false;
        return skim.object([&](std::string_view k) {
            if (k == "id") return skim.string(u.key);
            if (k == "model") return skim.string(u.model);
            if (k != "usage") return false;
            return skim.object([&](std::string_view n) {
                if (n == "input_tokens") return skim.number(u.input);
                if (n == "output_tokens") return skim.number(u.output);
                if (n == "cache_read_input_tokens") return skim.number(u.cache_read);
                if (n == "cache_creation_input_tokens") return skim.number(u.cache_write);
                return false;
            });
        });
    });
    if (!ok || type != "assistant" || u.key.empty()) return;
    // Claude Code's own notes (model "<synthetic>": an error shown as a reply) spent nothing.
    if (u.input == 0 && u.output == 0 && u.cache_read == 0 && u.cache_write == 0) return;
    u.at = epoch_ms(timestamp);
    out.push_back(std::move(u));
}

// Codex's running totals, as `token_count` says them and the cursor keeps them.
struct CodexTotals {
    std::int64_t input = 0;  // cached and cache writes included
    std::int64_t cached = 0;
    std::int64_t cache_write = 0;
    std::int64_t output = 0;  // reasoning included
    std::int64_t total = 0;

    static CodexTotals of(const json& usage) {
        return {int_of(usage, "input_tokens"), int_of(usage, "cached_input_tokens"),
                int_of(usage, "cache_write_input_tokens"), int_of(usage, "output_tokens"),
                int_of(usage, "total_tokens")};
    }
    json to_json() const {
        return {{"input_tokens", input},
                {"cached_input_tokens", cached},
                {"cache_write_input_tokens", cache_write},
                {"output_tokens", output},
                {"total_tokens", total}};
    }
};

struct CodexState {
    std::string file;  // the rollout's file name: the keys' prefix
    std::string model;
    CodexTotals last;
};

// Codex: {"timestamp","type":"turn_context","payload":{"model"}} and {"timestamp",
// "type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{…}}}}.
void codex_line(std::string_view line, CodexState& state, std::vector<UsageEntry>& out) {
    bool count = line.find("\"token_count\"") != std::string_view::npos;
    if (!count && line.find("\"turn_context\"") == std::string_view::npos) return;
    json entry = parse(line);
    const json& payload = object_at(entry, "payload");
    if (text_of(entry, "type") == "turn_context") {
        if (auto model = text_of(payload, "model"); !model.empty()) state.model = model;
        return;
    }
    if (text_of(payload, "type") != "token_count") return;
    const json& totals = object_at(object_at(payload, "info"), "total_token_usage");
    if (totals.is_null()) return;
    CodexTotals now = CodexTotals::of(totals);
    CodexTotals before = state.last;
    state.last = now;
    // A total that did not grow adds nothing; one that fell starts the count again from it.
    if (now.total <= before.total) return;
    auto delta = [](std::int64_t a, std::int64_t b) { return std::max<std::int64_t>(a - b, 0); };
    UsageEntry u;
    u.key = state.file + "#" + std::to_string(now.total);
    u.model = state.model;
    u.at = epoch_ms(text_of(entry, "timestamp"));
    u.cache_read = delta(now.cached, before.cached);
    u.cache_write = delta(now.cache_write, before.cache_write);
    u.input =
        std::max<std::int64_t>(delta(now.input, before.input) - u.cache_read - u.cache_write, 0);
    u.output = delta(now.output, before.output);
    out.push_back(std::move(u));
}

// A Gemini CLI message: {"id","timestamp","type":"gemini","model","tokens":{input (cached
// included), output, cached, thoughts, tool, total}}.
void gemini_message(const json& message, std::vector<UsageEntry>& out) {
    const json& tokens = object_at(message, "tokens");
    std::string id = text_of(message, "id");
    if (id.empty() || tokens.is_null()) return;
    UsageEntry u;
    u.key = std::move(id);
    u.model = text_of(message, "model");
    u.at = epoch_ms(text_of(message, "timestamp"));
    u.cache_read = int_of(tokens, "cached");
    u.input =
        std::max<std::int64_t>(int_of(tokens, "input") - u.cache_read, 0) + int_of(tokens, "tool");
    u.output = int_of(tokens, "output") + int_of(tokens, "thoughts");
    out.push_back(std::move(u));
}

void gemini_messages(const json& list, std::vector<UsageEntry>& out) {
    if (!list.is_array()) return;
    for (const auto& m : list) gemini_message(m, out);
}

// Gemini CLI's JSONL: a message record, or a `$set` whose `messages` may list them all.
void gemini_line(std::string_view line, std::vector<UsageEntry>& out) {
    if (line.find("\"tokens\"") == std::string_view::npos) return;
    json record = parse(line);
    if (!record.is_object()) return;
    if (auto set = record.find("$set"); set != record.end() && set->is_object()) {
        if (auto m = set->find("messages"); m != set->end()) gemini_messages(*m, out);
        return;
    }
    gemini_message(record, out);
}

// Entries once each by key (an entry repeated in the read: its first).
std::vector<UsageEntry> unique(std::vector<UsageEntry> all) {
    std::unordered_set<std::string> seen;
    std::vector<UsageEntry> out;
    out.reserve(all.size());
    for (auto& u : all) {
        if (seen.insert(u.key).second) out.push_back(std::move(u));
    }
    return out;
}

bool unchanged(const json& cursor, const FileState& now) {
    return cursor.is_object() && int_of(cursor, "size") == now.size &&
           int_of(cursor, "mtime_ns") == now.mtime_ns && int_of(cursor, "inode") == now.inode;
}

json file_cursor(const FileState& now) {
    return {{"size", now.size}, {"mtime_ns", now.mtime_ns}, {"inode", now.inode}};
}

// The old Gemini chat file, one JSON document rewritten whole: all its messages, each time.
RecordsRead read_whole_gemini(const std::filesystem::path& path, const FileState& now,
                              const json& cursor) {
    // A chat file of this size is not one (a file named by mistake): not read into memory.
    if (now.size > static_cast<std::int64_t>(kMaxLine)) return {{}, file_cursor(now)};
    std::ifstream in(path, std::ios::binary);
    if (!in) return {{}, cursor};
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<UsageEntry> all;
    json doc = parse(text);
    // A document being rewritten (not whole yet) is read at its next change.
    if (!doc.is_object()) return {{}, cursor};
    gemini_messages(doc.contains("messages") ? doc["messages"] : json(), all);
    return {unique(std::move(all)), file_cursor(now)};
}

}  // namespace

RecordsRead read_usage_records(std::string_view kind, const std::filesystem::path& path,
                               const json& cursor) {
    FileState now;
    if (!stat_file(path, now)) return {{}, cursor};
    if (unchanged(cursor, now)) return {{}, cursor};
    if (kind == "gemini" && path.extension() == ".json")
        return read_whole_gemini(path, now, cursor);

    // JSONL: from the cursor's offset, or from the start of a file replaced or cut shorter.
    bool same_file = cursor.is_object() && int_of(cursor, "inode") == now.inode &&
                     int_of(cursor, "offset") <= now.size;
    std::int64_t offset = same_file ? int_of(cursor, "offset") : 0;
    std::vector<UsageEntry> all;
    CodexState codex{path.filename().string(), "", {}};
    if (kind == "codex" && same_file) {
        codex.model = text_of(cursor, "model");
        codex.last = CodexTotals::of(object_at(cursor, "totals"));
    }
    std::function<void(std::string_view)> line;
    if (kind == "claude") {
        line = [&](std::string_view l) { claude_line(l, all); };
    } else if (kind == "codex") {
        line = [&](std::string_view l) { codex_line(l, codex, all); };
    } else if (kind == "gemini") {
        line = [&](std::string_view l) { gemini_line(l, all); };
    } else {
        return {{}, cursor};
    }
    if (!read_lines(path, offset, line)) return {{}, cursor};

    json next = file_cursor(now);
    next["offset"] = offset;
    if (kind == "codex") {
        next["model"] = codex.model;
        next["totals"] = codex.last.to_json();
    }
    return {unique(std::move(all)), std::move(next)};
}

}  // namespace team
