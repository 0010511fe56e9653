// team serve [--listen ADDR:PORT] [--unix PATH] [--allow-remote] [--web-root DIR] | --url
// The HTTP API and dashboard (SPEC 13). The server is http/'s; this file parses the address,
// keeps the token and the record of the running server in the home, and prints the address.
#include <arpa/inet.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "http/auth.hpp"
#include "http/server.hpp"
#include "ops/serve_record.hpp"

namespace team::cli {

namespace {

struct ServeFlags {
    std::string listen = ops::default_listen();
    std::string unix_path;
    bool allow_remote = false;
    std::string web_root;
    bool url = false;
    const CLI::Option* listen_option = nullptr;  // given or not: --unix alone is the socket only
};

struct Address {
    std::string host;  // as inet_pton reads it: 127.0.0.1, ::1
    unsigned short port = 0;
};

Address parse_listen(const std::string& text) {
    Address a;
    std::string port;
    if (!text.empty() && text.front() == '[') {  // [::1]:7733
        auto close = text.find(']');
        if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
            throw usage_error("--listen must be ADDR:PORT, not " + quote(text));
        }
        a.host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        auto colon = text.rfind(':');
        if (colon == std::string::npos) {
            throw usage_error("--listen must be ADDR:PORT, not " + quote(text));
        }
        a.host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    if (a.host == "localhost") a.host = "127.0.0.1";
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
        throw usage_error("--listen: the port must be a number up to 65535, not " + quote(port));
    }
    a.port = static_cast<unsigned short>(std::stoi(port));
    unsigned char buf[16];
    if (::inet_pton(AF_INET, a.host.c_str(), buf) != 1 &&
        ::inet_pton(AF_INET6, a.host.c_str(), buf) != 1) {
        throw usage_error("--listen: not an IP address: " + quote(a.host));
    }
    return a;
}

bool is_loopback(const std::string& host) {
    unsigned char v4[4];
    if (::inet_pton(AF_INET, host.c_str(), v4) == 1) return v4[0] == 127;
    return host == "::1";
}

bool is_any(const std::string& host) {
    return host == "0.0.0.0" || host == "::";
}

std::string url_host(const std::string& host) {
    return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

int serve_command(Context& ctx, const ServeFlags& f) {
    auto home = ctx.home();
    if (f.url) {
        auto running = std::filesystem::exists(home) ? ops::running_server(home) : std::nullopt;
        if (!running) throw not_found("no team serve is running for the home " + home.string());
        auto token = http::load_or_create_token(home);
        std::string url = running->url + "?token=" + token;
        if (ctx.out().json()) {
            ctx.out().print_json({{"url", url}, {"pid", running->pid}});
        } else {
            ctx.out().line(url);
        }
        return 0;
    }
    Address address = parse_listen(f.listen);
    // --unix alone serves the socket only; --listen beside it serves both.
    bool tcp = f.unix_path.empty() || f.listen_option->count() > 0;
    if (tcp && !is_loopback(address.host) && !f.allow_remote) {
        throw usage_error("--listen " + quote(f.listen) +
                          " is off the loopback: add --allow-remote to serve other machines "
                          "(plain HTTP), or reach it through an SSH tunnel");
    }
    ctx.ensure_home();
    if (auto running = ops::running_server(home)) {
        throw refused("a team serve is already running for this home at " + running->url +
                      " (pid " + std::to_string(running->pid) + ")");
    }

    http::ServerOptions o;
    o.identity = ctx.identity();
    o.identity.as.reset();    // the server acts as the leader, as a person at the command line
    o.identity.team.reset();  // of every team: each request names its own
    o.home = home;
    o.token = http::load_or_create_token(home);
    o.listen_host = address.host;
    o.port = address.port;
    o.tcp = tcp;
    o.any_host = is_any(address.host);
    if (!f.unix_path.empty()) o.unix_path = std::filesystem::absolute(f.unix_path);
    if (!f.web_root.empty()) {
        if (!std::filesystem::is_directory(f.web_root)) {
            throw usage_error("--web-root: not a directory: " + quote(f.web_root));
        }
        o.web_root = std::filesystem::absolute(f.web_root);
    }
    // Tests cut slow clients off sooner than a person's 10 s.
    if (const char* ms = std::getenv("TEAM_SERVE_HEADER_TIMEOUT_MS"); ms && *ms) {
        o.header_timeout = std::chrono::milliseconds(std::atoll(ms));
    }
    // The callback runs inside serve(), after `o` was moved into it: it keeps its own copies.
    o.ready = [&, token = o.token, unix_path = o.unix_path](unsigned short port) {
        std::string base =
            tcp ? "http://" + url_host(address.host) + ":" + std::to_string(port) + "/"
                : "http://localhost/";
        ops::write_serve_record(home, ops::this_server(base));
        if (tcp && !is_loopback(address.host)) {
            std::fprintf(stderr,
                         "team serve: warning: listening on %s: the traffic, token included, is "
                         "plain HTTP; prefer an SSH tunnel (ssh -L %u:%s host)\n",
                         address.host.c_str(), unsigned{ops::kServePort},
                         ops::default_listen().c_str());
        }
        if (unix_path) {
            std::fprintf(stderr, "team serve: on the unix socket %s (curl --unix-socket %s)\n",
                         unix_path->c_str(), unix_path->c_str());
        }
        std::string line = base + "?token=" + token + "\n";
        std::fwrite(line.data(), 1, line.size(), stdout);
        std::fflush(stdout);
    };
    // A client that went away must not kill us mid-write: the write fails.
    std::signal(SIGPIPE, SIG_IGN);
    http::serve(std::move(o));
    ops::remove_serve_record(home);
    // Operations still waiting on threads of their own were cancelled; a kill in its grace is
    // not waited for (SPEC 13: SIGTERM stops the server within a second).
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(0);
}

}  // namespace

void add_serve_command(CLI::App& app) {
    auto flags = std::make_shared<ServeFlags>();
    auto* cmd = add_command(
        app, "serve",
        "serve the home's HTTP API and live dashboard (prints the address with its token)",
        [flags](Context& ctx) { return serve_command(ctx, *flags); });
    auto* listen = cmd->add_option(
        "--listen", flags->listen,
        "ADDR:PORT to listen on (default " + ops::default_listen() + "; port 0: any free port)");
    listen->type_name("ADDR:PORT");
    flags->listen_option = listen;
    cmd->add_option("--unix", flags->unix_path, "also (or, without --listen, only) a unix socket")
        ->type_name("PATH");
    cmd->add_flag("--allow-remote", flags->allow_remote,
                  "allow an address off the loopback (plain HTTP: prefer an SSH tunnel)");
    cmd->add_option("--web-root", flags->web_root,
                    "serve the dashboard's files from DIR instead of the binary's copy")
        ->type_name("DIR");
    cmd->add_flag("--url", flags->url, "print the address of the server already running");
    std::string port = std::to_string(ops::kServePort);
    cmd->footer(
        "Examples:\n"
        "  team serve                       # http://" +
        ops::default_listen() +
        "/?token=...\n"
        "  team serve --listen 127.0.0.1:0  # any free port\n"
        "  team serve --url                 # the address of the running one\n"
        "From another machine: ssh -L " +
        port + ":" + ops::default_listen() + " host, then open the address there.");
}

}  // namespace team::cli
