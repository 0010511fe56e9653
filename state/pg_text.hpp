// Text handling of the PostgreSQL backend (state/pg_db.hpp), apart so it can be tested without
// a server: store URLs made fit to show, libpq's messages made one clean line, and the common
// dialect's parameters (`?`, `?N`) turned into PostgreSQL's (`$N`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace team {

// `url` fit to show: the password of a URI's user part (postgresql://user:pw@host/db) and any
// `password=` key (in a URI's query or a key=value string) replaced with `***`.
std::string redact_store_url(const std::string& url);

// redact_store_url, also adding to `secrets` each password it hid (as written and
// percent-decoded), for pg_scrub_message.
std::string pg_redact_url(const std::string& url, std::vector<std::string>& secrets);

// A libpq message fit to show: its first line, without "ERROR:"/"FATAL:", with `url` replaced
// by `redacted` and every secret by `***` (libpq quotes a URL it cannot parse).
std::string pg_scrub_message(std::string_view message, const std::string& url,
                             const std::vector<std::string>& secrets, const std::string& redacted);

// The SQL as PostgreSQL wants it: `?` becomes `$k` (k one more than the highest parameter
// number so far, as SQLite counts) and `?N` becomes `$N`, outside single-quoted strings,
// double-quoted identifiers and comments. `parameters` (if given) receives the highest number.
// SQLite's index hints (`INDEXED BY name`) are dropped.
std::string pg_translate_parameters(std::string_view sql, int* parameters = nullptr);

}  // namespace team
