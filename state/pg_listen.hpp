// A listener of a PostgreSQL store's wake-ups (SPEC 16): its own connection, LISTENing on the
// channel every write NOTIFYs in its transaction (state/pg_db.hpp). A listener that loses its
// connection has lost what was sent meanwhile, so a reconnect counts as a wake-up: the waiter
// re-reads (ChangeWatch's contract: spurious wake-ups are fine, missed ones are not).
#pragma once

#include <string>

struct pg_conn;

namespace team {

class Db;

class PgListener {
  public:
    // What it listens to: every change (kPgChangeChannel), the writes that stored a message
    // (kPgMessageChannel), or the bells of supervisors (a command of another home that changed
    // an agent's shutdown requests rings its supervisor: kPgSupervisorChannel, the agent's id as
    // the payload).
    enum class Channel { changes, messages, supervisors };

    // Connects and LISTENs; throws StoreError (cannot_open) when the store cannot be reached.
    // `payload`: only notifications that carry it count (none: all of them).
    explicit PgListener(const std::string& url, Channel channel = Channel::changes,
                        std::string payload = {});
    // LISTENs on the connection of `db` (a PostgreSQL store's) instead of one of its own: no
    // second connection to make (a backend start, 15-30 ms of a command's life). The owner runs
    // its statements on it between waits; what arrives meanwhile waits in libpq's queue, so a
    // waiter drains before it polls. UNLISTENs when it goes. `db` must outlive it. One listener
    // at a time shares a connection: one made while another does (a wait nested in another's)
    // gets a connection of its own.
    PgListener(Db& db, Channel channel);
    ~PgListener();
    PgListener(const PgListener&) = delete;
    PgListener& operator=(const PgListener&) = delete;

    // The connection's socket (-1 while it is lost); it changes on a reconnect.
    int socket() const;
    // Reads what arrived: true when a notification came, or the connection was lost and is
    // back (what was sent meanwhile is lost: re-read). While it is lost, each call tries to
    // reconnect once.
    bool drain();
    bool connected() const { return conn_ != nullptr; }
    // Whether it shares its store's connection (above).
    bool shared() const { return db_ != nullptr; }
    // Counts the connections made (from 1), so that a watcher sees a new socket.
    unsigned generation() const { return generation_; }

  private:
    bool connect();
    bool listen(pg_conn* conn);

    std::string url_;
    Channel channel_;
    std::string payload_;
    pg_conn* conn_ = nullptr;
    Db* db_ = nullptr;     // the store whose connection it shares, if it does
    unsigned resets_ = 0;  // that connection's pg_resets when it LISTENed
    unsigned generation_ = 0;
};

}  // namespace team
