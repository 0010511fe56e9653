// The hosts repository (SPEC 16, second half): the machines whose own `team` runs agents of the
// store's teams, reached over ssh (hosts/), each with a lease that its keeper renews by the
// store's clock. Store-wide, not per team: one host serves every team of the store.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

struct HostRecord {
    std::int64_t id = 0;
    std::string name;
    std::string ssh;        // [USER@]HOST
    std::string team_path;  // the far team binary
    std::string home_id;    // the far home's id: its agents are those of this home
    std::string version;    // the far team's, when last checked
    std::int64_t lease_ms = 0;
    std::optional<EpochMs> renewed_at;  // NULL: no keeper holds the lease (no agent there)
    std::optional<EpochMs> lost_at;     // declared lost (team host lost, or the lease ran out)
    std::optional<std::int64_t> rtt_us;
    std::optional<EpochMs> checked_at;
    std::optional<std::string> check_error;
    EpochMs added_at = 0;
};

std::optional<HostRecord> find_host(Store& store, const std::string& name);
std::optional<HostRecord> find_host_by_home(Store& store, const std::string& home_id);
std::vector<HostRecord> list_hosts(Store& store);
std::vector<std::string> host_names(Store& store);

// Inside Store::write.
std::int64_t insert_host(Store& store, const HostRecord& host);
bool delete_host(Store& store, const std::string& name);
// The far side's answers to a check: its version, and the round trip (or the error).
void record_host_check(Store& store, const std::string& name, const std::string& version,
                       std::optional<std::int64_t> rtt_us, const std::optional<std::string>& error,
                       EpochMs at);
// The keeper's renewal: false when the host is lost (a lost host's keeper ends its agents).
bool renew_host_lease(Store& store, const std::string& home_id, EpochMs at);
// A keeper that ends with no agent left gives its lease up (renewed_at NULL).
void release_host_lease(Store& store, const std::string& home_id);
void mark_host_lost(Store& store, const std::string& name, EpochMs at);
// A lost host that answers again, with no agent left there, is taken back (`host check`).
void clear_host_lost(Store& store, const std::string& name);

}  // namespace team

namespace team {

// The lease's rules (SPEC 16), by the store's clock: a keeper renews every lease/6; a host is
// `up` while its last renewal is at most two renewals old, `suspect` until the lease runs out,
// and `lost` after (or when declared lost). Another home hands its agents' tasks back only once
// the lease has run out and a grace more has passed; the keeper ends its own agents before that,
// when it has not renewed for 3/4 of the lease. `idle`: no keeper holds the lease (no agent).
enum class HostState { idle, up, suspect, lost };
const char* str(HostState state);
HostState host_state(const HostRecord& host, EpochMs now);
// Whether the agents of `host` are to be taken as ended by others: declared lost, or the lease
// (renewed last at renewed_at, or never since `since`, an agent's creation) ran out a grace ago.
bool lease_run_out(const HostRecord& host, EpochMs now, EpochMs since);
inline std::int64_t renew_every_ms(const HostRecord& host) {
    return std::max<std::int64_t>(host.lease_ms / 6, 100);
}
inline std::int64_t grace_ms(const HostRecord& host) {
    return host.lease_ms / 4;
}

}  // namespace team

namespace team {
// The ids of the live agents that run in home `home_id`, of every team.
std::vector<std::int64_t> live_agents_of_home(Store& store, const std::string& home_id);
}  // namespace team
