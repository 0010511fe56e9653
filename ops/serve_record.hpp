// The record of the running `team serve`, <home>/serve.json: its address, pid and the pid's start
// time, so a server that died is recognised as gone, not reported. The one reader and writer:
// `team serve` writes it and `serve --url` reads it (cli/cmd_serve.cpp), doctor reads it for its
// dashboard check (ops/doctor_ops.cpp).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace team::ops {

// Where `team serve` listens unless told (SPEC 13), stated here once: serve's --listen, its help,
// the server's options and doctor's port check read it (and the docs test checks the guide).
inline constexpr std::string_view kServeHost = "127.0.0.1";
inline constexpr unsigned short kServePort = 7733;

// kServeHost:kServePort.
inline std::string default_listen() {
    return std::string(kServeHost) + ":" + std::to_string(kServePort);
}

struct ServeRecord {
    std::string url;  // http://127.0.0.1:7733/ (no token)
    pid_t pid = 0;
    std::uint64_t start_time = 0;
};

// The record of this process serving at `url`.
ServeRecord this_server(std::string url);
void write_serve_record(const std::filesystem::path& home, const ServeRecord& record);
// The record when its server still runs; none otherwise (no record, a damaged one, or its
// process gone or its pid reused).
std::optional<ServeRecord> running_server(const std::filesystem::path& home);
// Removes the record if it is this process's.
void remove_serve_record(const std::filesystem::path& home);

}  // namespace team::ops
