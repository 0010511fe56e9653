#include "ops/names_in_home.hpp"

#include "state/members.hpp"
#include "state/session_records.hpp"
#include "state/shell_records.hpp"
#include "state/task_rows.hpp"
#include "team/agents.hpp"
#include "team/presets.hpp"

namespace team::ops {

namespace {

std::string joined(const nlohmann::json& argv) {
    std::string s;
    for (const auto& a : argv) {
        if (!s.empty()) s += ' ';
        s += a.get<std::string>();
    }
    if (s.size() > 60) s.resize(57), s.append("...");
    return s;
}

}  // namespace

NamedValues names_in_home(Core& core, HomeNames kind) {
    if (!core.has_store()) return {};  // never create a home by pressing TAB
    NamedValues out;
    Store& store = core.store();
    switch (kind) {
        case HomeNames::team:
            for (const auto& t : core.teams().list(false)) out.emplace_back(t.name, t.description);
            break;
        case HomeNames::agent:
            for (const auto& a : load_agents(store, core.team(), false)) {
                std::string what(str(a.status));
                if (!a.role.empty()) what.append(", ").append(a.role);
                out.emplace_back(a.name, std::move(what));
            }
            break;
        case HomeNames::task:
            for (const auto& t : list_tasks(store, core.team().id, {})) {
                // (Appended rather than added up: GCC 12 warns falsely on the sum.)
                std::string what(str(t.status));
                what.append(": ").append(t.subject);
                out.emplace_back(std::to_string(t.id), std::move(what));
            }
            break;
        case HomeNames::shell:
            for (const auto& s : ShellRecords(store).list(false, std::nullopt, std::nullopt)) {
                out.emplace_back(s.id, joined(s.command));
            }
            break;
        case HomeNames::session:
            for (const auto& s : SessionRecords(store).list()) out.emplace_back(s.name, "");
            break;
    }
    return out;
}

const std::vector<std::string>& preset_choices() { return preset_names(); }

const std::vector<std::string>& color_choices() { return color_pool(); }

}  // namespace team::ops
