// The operations of settings (SPEC 17): `team config`, `team config get | set | unset KEY
// [VALUE]`, for the home or, with --team, for a team (team/config.hpp). A team's keys are its
// leader's to change; the home's are not an agent's.
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "team/config.hpp"
#include "team/teams.hpp"

namespace team::ops {

namespace {

const std::vector<std::string>& key_choices() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& k : config_keys()) out.emplace_back(k.name);
        return out;
    }();
    return names;
}

nlohmann::json entry_doc(const ConfigEntry& e, const std::optional<TeamRecord>& team) {
    auto doc = to_json(e);
    doc["team"] = team ? nlohmann::json(team->name) : nlohmann::json(nullptr);
    for (const auto& k : config_keys()) {
        if (k.name != e.key) continue;
        doc["scopes"] = nlohmann::json::array();
        if (k.home) doc["scopes"].push_back("home");
        if (k.team) doc["scopes"].push_back("team");
        doc["help"] = std::string(k.help);
    }
    return doc;
}

// Who changes a setting: a team's leader for a team's, and for the home's anyone but an agent.
std::string changer(Request& r) {
    if (r.team) {
        require_leader(r.caller(), "change the team's settings");
        return r.caller().id();
    }
    if (r.core.identity().as) {
        throw refused("an agent (" + quote(*r.core.identity().as) +
                      ") cannot change the home's settings: the person or the leader's shell does");
    }
    return "user";
}

Result config_list(Request& r) {
    nlohmann::json doc = nlohmann::json::array();
    for (const auto& e : Config(r.core.store(), r.core.clock()).list(r.team)) {
        doc.push_back(entry_doc(e, r.team));
    }
    return Result(doc);
}

Result config_get(Request& r) {
    auto e = Config(r.core.store(), r.core.clock()).get(r.team, r.args.string("key"));
    return Result(entry_doc(e, r.team));
}

Result config_set(Request& r) {
    config_key(r.args.string("key"));  // an unknown key is a usage error before who asks
    std::string by = changer(r);
    auto e = Config(r.core.store(), r.core.clock())
                 .set(r.team, by, r.args.string("key"), r.args.string("value"));
    auto doc = entry_doc(e, r.team);
    doc["success"] = true;
    return Result(doc);
}

Result config_unset(Request& r) {
    config_key(r.args.string("key"));
    std::string by = changer(r);
    auto [removed, e] =
        Config(r.core.store(), r.core.clock()).unset(r.team, by, r.args.string("key"));
    auto doc = entry_doc(e, r.team);
    doc["success"] = true;
    doc["removed"] = removed;
    return Result(doc);
}

const Param kKey{.name = "key",
                 .help = "the setting (team config lists them)",
                 .placeholder = "KEY",
                 .required = true,
                 .positional = true,
                 .choices = key_choices};

}  // namespace

const Operation config_list_op{
    .name = "config_list",
    .command = "config",
    .tool = "config_list",
    .routes = {{"GET", "/api/config"}, {"GET", "/api/teams/{team}/config"}},
    .summary = "every setting with its value and where it comes from (team, home or default)",
    .params = {},
    .access = Access::read,
    .scope = Scope::named_team,
    .body = config_list,
};

const Operation config_get_op{
    .name = "config_get",
    .command = "config get",
    .tool = "config_get",
    .routes = {{"GET", "/api/config/{key}"}, {"GET", "/api/teams/{team}/config/{key}"}},
    .summary = "one setting: its value and where it comes from",
    .params = {kKey},
    .access = Access::read,
    .scope = Scope::named_team,
    .body = config_get,
};

const Operation config_set_op{
    .name = "config_set",
    .command = "config set",
    .tool = "config_set",
    .routes = {{"PUT", "/api/config/{key}"}, {"PUT", "/api/teams/{team}/config/{key}"}},
    .summary = "set a setting of the home, or with --team of a team (its leader only)",
    .params = {kKey,
               {.name = "value",
                .help = "its value",
                .placeholder = "VALUE",
                .required = true,
                .positional = true}},
    .access = Access::write,
    .scope = Scope::named_team,
    .body = config_set,
};

const Operation config_unset_op{
    .name = "config_unset",
    .command = "config unset",
    .tool = "config_unset",
    .routes = {{"DELETE", "/api/config/{key}"}, {"DELETE", "/api/teams/{team}/config/{key}"}},
    .summary = "remove a setting of the home, or with --team of a team: the next one counts",
    .params = {kKey},
    .access = Access::write,
    .scope = Scope::named_team,
    .body = config_unset,
};

}  // namespace team::ops
