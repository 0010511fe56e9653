#include "state/pg_listen.hpp"

#include <libpq-fe.h>

#include <string_view>
#include <utility>

#include "state/db.hpp"
#include "state/pg_db.hpp"

namespace team {

PgListener::PgListener(const std::string& url, Channel channel, std::string payload)
    : url_(url), channel_(channel), payload_(std::move(payload)) {
    if (!connect()) {
        throw StoreError(
            StoreError::Kind::cannot_open,
            "cannot reach the store " + redact_store_url(url_) + " to wait for changes");
    }
}

PgListener::~PgListener() {
    if (conn_) PQfinish(conn_);
}

bool PgListener::connect() {
    if (conn_) PQfinish(conn_);
    conn_ = connect_postgresql(url_);
    if (!conn_) return false;
    // Literals (GCC 12 takes a string built from the channel's name for an overflow).
    static_assert(std::string_view(kPgChangeChannel) == "team_changes");
    static_assert(std::string_view(kPgSupervisorChannel) == "team_supervisors");
    PGresult* r = PQexec(
        conn_, channel_ == Channel::changes ? "LISTEN team_changes" : "LISTEN team_supervisors");
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok || PQsetnonblocking(conn_, 1) != 0) {
        PQfinish(conn_);
        conn_ = nullptr;
        return false;
    }
    ++generation_;
    return true;
}

int PgListener::socket() const {
    return conn_ ? PQsocket(conn_) : -1;
}

bool PgListener::drain() {
    if (!conn_) return connect();  // back: what was sent meanwhile is lost, so re-read
    bool woken = false;
    if (PQconsumeInput(conn_) == 0 || PQstatus(conn_) != CONNECTION_OK) {
        PQfinish(conn_);
        conn_ = nullptr;
        return connect();
    }
    while (PGnotify* n = PQnotifies(conn_)) {
        if (payload_.empty() || (n->extra && payload_ == n->extra)) woken = true;
        PQfreemem(n);
    }
    return woken;
}

}  // namespace team
