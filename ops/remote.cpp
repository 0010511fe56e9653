#include "ops/remote.hpp"

#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "base/names.hpp"
#include "base/programs.hpp"
#include "hosts/keeper.hpp"
#include "hosts/link.hpp"
#include "ops/workers.hpp"
#include "proc/detach.hpp"
#include "state/host_rows.hpp"
#include "state/members.hpp"
#include "state/schema.hpp"

namespace team::ops {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

ErrorCode code_from_name(const std::string& name) {
    for (auto code : {ErrorCode::failed, ErrorCode::usage, ErrorCode::not_found, ErrorCode::refused,
                      ErrorCode::timeout, ErrorCode::unconfirmed}) {
        if (code_name(code) == name) return code;
    }
    return ErrorCode::failed;
}

// How long a request may take on the host: its own waits (a kill's grace, a --timeout) and a
// margin for ssh and the far side's store.
std::chrono::milliseconds request_timeout(const Operation& op, const Args& args) {
    std::chrono::milliseconds total = 15s;
    for (const auto& p : op.params) {
        if (p.type == Type::duration && args.has(p.name)) total += *args.duration(p.name);
    }
    return total;
}

}  // namespace

std::optional<Result> run_on_host(Core& core, const Operation& op, const Args& args,
                                  const std::optional<TeamRecord>& team) {
    if (op.agent_param.empty() && op.host_param.empty()) return std::nullopt;
    if (op.runs_on_host && !op.runs_on_host(args)) return std::nullopt;
    bool named_host = !op.host_param.empty() && args.has(op.host_param);
    if (!named_host && !core.has_store()) return std::nullopt;
    Store& store = core.store();
    std::optional<HostRecord> host;
    if (named_host) {
        auto name = args.string(op.host_param);
        hosts::check_host_name(name);
        if (store.engine() != Db::Engine::postgresql) {
            throw refused(
                "agents on other hosts need a shared store (SPEC 16): this home uses "
                "SQLite; see `team store use`");
        }
        host = find_host(store, name);
        if (!host) {
            throw not_found("host " + quote(name) + " not found (`team host add` first)" +
                            did_you_mean(name, host_names(store)));
        }
        if (host->home_id == store.home_id()) return std::nullopt;  // this is that host
        if (host->lost_at) {
            throw refused("host " + quote(name) + " is lost; `team host check " + name +
                          "` takes it back once it answers");
        }
    } else if (!op.agent_param.empty() && team && store.engine() == Db::Engine::postgresql &&
               args.has(op.agent_param)) {
        auto member = find_member(store, *team, args.string(op.agent_param));
        if (!member || !member->live() || member->lives_in(store.home_id())) return std::nullopt;
        host = find_host_by_home(store, *member->home_id);
    }
    if (!host) return std::nullopt;
    if (args.flag_if_declared("follow")) {
        throw usage_error(args.label("follow") + " of what runs on host " + quote(host->name) +
                          ": follow it there (ssh " + host->ssh + " team " +
                          std::string(op.command) + " --follow …)");
    }
    nlohmann::json request = {
        {"op", op.name},
        {"values", args.values()},
        {"team", team ? nlohmann::json(team->name) : nlohmann::json(nullptr)},
        {"as", core.identity().as ? nlohmann::json(*core.identity().as) : nlohmann::json(nullptr)},
        {"via",
         core.identity().via ? nlohmann::json(*core.identity().via) : nlohmann::json(nullptr)}};
    nlohmann::json reply;
    try {
        reply = hosts::call(core.home(), {host->name, host->ssh, host->team_path}, own_binary(),
                            request, request_timeout(op, args));
    } catch (const hosts::Unreachable& e) {
        if (op.name == "kill_agent") {
            Request r(core, op, args);
            r.team = team;
            return kill_agent_unanswered(r, e.what());
        }
        throw failed(std::string(e.what()) + " (nothing was done there)");
    }
    Result result(reply.value("doc", nlohmann::json::object()), reply.value("exit", 0));
    result.exit_is_answer = reply.value("answer", false);
    if (reply.contains("error") && reply["error"].is_string()) {
        result.error =
            Error(code_from_name(reply.value("code", "failed")), reply["error"].get<std::string>());
    }
    return result;
}

namespace {

// The far side of the channel: requests run on workers, each with its cores (one per identity,
// so a store connection is opened once per worker and identity), as many workers as requests
// were ever in flight at once.
class Channel {
  public:
    Channel(std::string version, int out_fd) : version_(std::move(version)), out_fd_(out_fd) {}

    void hello(const nlohmann::json& request) {
        const auto& h = request["hello"];
        nlohmann::json reply = {{"id", request.value("id", 0)}};
        try {
            auto store = h.value("store", "");
            const char* mine = std::getenv("TEAM_STORE");
            if (!store.empty() && (!mine || !*mine)) ::setenv("TEAM_STORE", store.c_str(), 1);
            Core core(Identity{});
            Store& s = core.store();
            // A keeper that died (killed, out of memory) while agents of this home live is
            // started again by the next contact (host check), before their lease runs out.
            if (s.engine() == Db::Engine::postgresql &&
                !live_agents_of_home(s, s.home_id()).empty()) {
                hosts::ensure_keeper(s, own_binary());
            }
            char name[256] = {};
            ::gethostname(name, sizeof name - 1);
            reply["hello"] = {{"version", version_},       {"homeId", s.home_id()},
                              {"home", s.home().string()}, {"hostname", name},
                              {"schema", kSchemaVersion},  {"store", s.shown()}};
        } catch (const std::exception& e) {
            reply["error"] = e.what();
        }
        write(reply);
    }

    void submit(nlohmann::json request) {
        workers_.post(
            [this, request = std::move(request)](CoreCache& cores) { run(cores, request); });
    }

    void write(const nlohmann::json& reply) {
        std::lock_guard lock(out_m_);
        proc::write_all(
            out_fd_, reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    }

    // Every request taken is answered before the channel ends.
    void finish() { workers_.stop(); }

  private:
    void run(CoreCache& cores, const nlohmann::json& request) {
        nlohmann::json reply = {{"id", request.value("id", 0)}};
        std::function<void()> after;
        try {
            auto name = request.value("op", "");
            const Operation* op = find_operation(name);
            if (!op) throw usage_error("no operation " + quote(name));
            auto text = [&](const char* key) -> std::optional<std::string> {
                auto it = request.find(key);
                if (it == request.end() || !it->is_string()) return std::nullopt;
                return it->get<std::string>();
            };
            Identity identity{std::nullopt, text("team"), text("as"), text("via")};
            Result result = invoke(cores.get(identity), *op,
                                   request.value("values", nlohmann::json::object()), Naming::json);
            cores.after(identity, result);
            reply["doc"] = result.doc;
            reply["exit"] = result.exit_code;
            if (result.exit_is_answer) reply["answer"] = true;
            if (result.error) {
                reply["error"] = result.error->what();
                reply["code"] = code_name(result.error->code());
            }
            after = std::move(result.after_reply);
        } catch (const Error& e) {
            refuse(reply, e);
        } catch (const std::exception& e) {
            refuse(reply, failed(e.what()));
        }
        write(reply);
        if (after) after();
    }

    // A request that never reached its operation (unknown, or a core that could not be made).
    static void refuse(nlohmann::json& reply, const Error& e) {
        reply["doc"] = error_document(e);
        reply["exit"] = exit_code(e.code());
        reply["error"] = e.what();
        reply["code"] = code_name(e.code());
    }

    std::string version_;
    int out_fd_;
    std::mutex out_m_;
    Workers workers_;  // finish() waits for them
};

}  // namespace

int serve_channel(const std::string& version, int in_fd, int out_fd) {
    Channel channel(version, out_fd);
    std::string buffer;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(in_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        buffer.append(buf, static_cast<size_t>(n));
        std::size_t start = 0;
        for (auto nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n', start)) {
            auto line = buffer.substr(start, nl - start);
            start = nl + 1;
            auto request = nlohmann::json::parse(line, nullptr, false);
            if (!request.is_object()) {
                channel.write({{"id", 0}, {"error", "the request is not a JSON object"}});
                continue;
            }
            if (request.contains("hello")) {
                channel.hello(request);
            } else if (request.contains("ping")) {
                channel.write({{"id", request.value("id", 0)}, {"pong", true}});
            } else {
                channel.submit(std::move(request));
            }
        }
        buffer.erase(0, start);
        if (buffer.size() > (64u << 20)) break;  // no line that long is ours
    }
    channel.finish();
    return 0;
}

}  // namespace team::ops
