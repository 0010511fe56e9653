#include "state/pg_listen.hpp"

#include <libpq-fe.h>

#include <string_view>

#include "state/db.hpp"
#include "state/pg_db.hpp"

namespace team {

PgListener::PgListener(const std::string& url) : url_(url) {
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
    // One literal (GCC 12 takes a string built from the channel's name for an overflow).
    static_assert(std::string_view(kPgChangeChannel) == "team_changes");
    PGresult* r = PQexec(conn_, "LISTEN team_changes");
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
        woken = true;
        PQfreemem(n);
    }
    return woken;
}

}  // namespace team
