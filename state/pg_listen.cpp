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

PgListener::PgListener(Db& db, Channel channel) : channel_(channel) {
    // Nested in another's wait on the same store: a connection of its own, as from a URL.
    if (pg_share(db)) {
        db_ = &db;
    } else {
        url_ = pg_url(db);
    }
    if (!connect()) {
        if (db_) pg_unshare(db);
        throw StoreError(StoreError::Kind::unreachable,
                         "cannot reach " + pg_store_name(db) + " to wait for changes");
    }
}

PgListener::~PgListener() {
    if (db_) pg_unshare(*db_);
    if (!conn_) return;
    if (!db_) {
        PQfinish(conn_);
        return;
    }
    // The store's connection goes on: it stops listening, and what is queued is dropped.
    if (PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) == PQTRANS_IDLE) {
        PQclear(PQexec(conn_, "UNLISTEN *"));
    }
    while (PGnotify* n = PQnotifies(conn_)) PQfreemem(n);
}

bool PgListener::listen(pg_conn* conn) {
    // Literals (GCC 12 takes a string built from the channel's name for an overflow).
    static_assert(std::string_view(kPgChangeChannel) == "team_changes");
    static_assert(std::string_view(kPgSupervisorChannel) == "team_supervisors");
    static_assert(std::string_view(kPgMessageChannel) == "team_messages");
    const char* listen = channel_ == Channel::changes    ? "LISTEN team_changes"
                         : channel_ == Channel::messages ? "LISTEN team_messages"
                                                         : "LISTEN team_supervisors";
    PGresult* r = PQexec(conn, listen);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok;
}

bool PgListener::connect() {
    if (db_) {
        // The store's connection, made again first if it was lost (its LISTEN went with it).
        conn_ = pg_connection(*db_);
        if (!conn_) return false;
        if (!listen(conn_)) {
            conn_ = nullptr;
            return false;
        }
        resets_ = pg_resets(*db_);
        ++generation_;
        return true;
    }
    if (conn_) PQfinish(conn_);
    conn_ = connect_postgresql(url_);
    if (!conn_) return false;
    if (!listen(conn_) || PQsetnonblocking(conn_, 1) != 0) {
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
    // The store's connection made again by a statement of its owner: LISTEN again, and re-read.
    if (db_ && pg_resets(*db_) != resets_) return connect();
    bool woken = false;
    if (PQconsumeInput(conn_) == 0 || PQstatus(conn_) != CONNECTION_OK) {
        if (!db_) PQfinish(conn_);  // a shared one is the store's, made again by connect()
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
