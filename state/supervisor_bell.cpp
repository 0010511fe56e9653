#include "state/supervisor_bell.hpp"

#include <string>
#include <string_view>

#include "state/db.hpp"
#include "state/pg_db.hpp"
#include "state/pg_listen.hpp"
#include "state/store.hpp"

namespace team {

SupervisorBell::SupervisorBell(const std::filesystem::path& home, std::int64_t agent_id)
    : url_(resolve_store_url(home)), agent_(std::to_string(agent_id)) {
    check();
}

SupervisorBell::~SupervisorBell() = default;

int SupervisorBell::fd() const {
    return listener_ ? listener_->socket() : -1;
}

bool SupervisorBell::check() {
    if (url_.empty()) return false;
    if (listener_) return listener_->drain();
    try {
        listener_ = std::make_unique<PgListener>(url_, PgListener::Channel::supervisors, agent_);
        return true;  // listening from now on: what came before it, the caller looks at anyway
    } catch (const StoreError&) {
        return false;
    }
}

void ring_supervisor_bell(Store& store, std::int64_t agent_id) {
    if (store.engine() != Db::Engine::postgresql) return;
    static_assert(std::string_view(kPgSupervisorChannel) == "team_supervisors");
    Statement ring(store.db(), "SELECT pg_notify('team_supervisors', ?)");
    ring.bind(1, std::to_string(agent_id));
    ring.executeStep();
}

}  // namespace team
