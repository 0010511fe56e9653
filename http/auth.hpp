// Who may talk to `team serve` (SPEC 13): the token kept in the home, how a request shows it
// (Authorization: Bearer, or the cookie the page got from /?token=), the Host check against DNS
// rebinding. No Beast here. (The record of the running server is ops/serve_record.hpp.)
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace team::http {

// The name of the cookie that carries the token for a browser (EventSource cannot send headers).
inline constexpr std::string_view kCookieName = "team_token";

// The home's token: 256 random bits as 64 hex digits in <home>/serve.token (0600), made on first
// use and the same for every later server, so a bookmarked address keeps working.
std::string load_or_create_token(const std::filesystem::path& home);

// Compares in time that depends on the lengths only, never on where the first difference is.
bool same_token(std::string_view a, std::string_view b);

// The token of an "Authorization: Bearer TOKEN" header; none for any other scheme.
std::optional<std::string> bearer_token(std::string_view authorization);

// The value of cookie `name` in a Cookie header ("a=1; team_token=...").
std::optional<std::string> cookie_value(std::string_view cookie_header, std::string_view name);

// Whether a Host header names this server: localhost, 127.0.0.1 or [::1] (any port: an SSH
// tunnel may forward another local port), or the address it listens on. Anything else is a page
// of another site that resolved its own name to us (DNS rebinding).
bool host_allowed(std::string_view host, std::string_view listen_host);

}  // namespace team::http
