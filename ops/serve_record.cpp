#include "ops/serve_record.hpp"

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/whole_file.hpp"
#include "proc/process_table.hpp"

namespace team::ops {

namespace {

std::filesystem::path record_path(const std::filesystem::path& home) {
    return home / "serve.json";
}

}  // namespace

ServeRecord this_server(std::string url) {
    return {std::move(url), ::getpid(), proc::start_time_of(::getpid()).value_or(0)};
}

void write_serve_record(const std::filesystem::path& home, const ServeRecord& record) {
    nlohmann::json doc = {
        {"url", record.url}, {"pid", record.pid}, {"startTime", record.start_time}};
    replace_file(record_path(home), doc.dump() + "\n", true);
}

std::optional<ServeRecord> running_server(const std::filesystem::path& home) {
    std::ifstream in(record_path(home));
    if (!in) return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    auto doc = nlohmann::json::parse(text.str(), nullptr, false);
    if (!doc.is_object()) return std::nullopt;
    ServeRecord r;
    try {
        r.url = doc.value("url", "");
        r.pid = doc.value("pid", 0);
        r.start_time = doc.value("startTime", std::uint64_t{0});
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;  // a field of another type: not a record of ours
    }
    if (r.pid <= 0 || r.url.empty()) return std::nullopt;
    // A pid reused by another process has another start time.
    auto start = proc::start_time_of(r.pid);
    if (!start || *start != r.start_time) return std::nullopt;
    return r;
}

void remove_serve_record(const std::filesystem::path& home) {
    auto r = running_server(home);
    if (r && r->pid == ::getpid()) std::filesystem::remove(record_path(home));
}

}  // namespace team::ops
