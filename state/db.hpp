// One connection to a store, whatever engine holds it (SPEC 2 and 16): SQLite in the home, or
// PostgreSQL through libpq. The repositories of state/ speak SQL through this interface alone,
// so that nothing outside state/ names an engine. The SQL they write is the common dialect of the
// two (parameters as `?` or `?N`, `RETURNING`, `ON CONFLICT`, `COALESCE`); a backend translates
// what must be translated (PostgreSQL's `$N`). Where the two differ in more than spelling (the
// schema, migrations, the write path, wake-ups, errors), the backend does it its own way.
//
// The statement API is the subset of SQLiteCpp's that the repositories used before there were
// two engines (bind, executeStep, getColumn, exec), so the change to them was mechanical.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace team {

// A condition of the store, in the project's words: every backend translates its own errors into
// these kinds once (state/sqlite_db.cpp, state/pg_db.cpp), and rethrow_store_error (store.hpp)
// turns them into SPEC 1.4's codes.
class StoreError : public std::runtime_error {
  public:
    enum class Kind {
        busy,         // another writer held the store past the timeout
        read_only,    // the store cannot be written (a read-only home, a read-only role)
        cannot_open,  // the store cannot be opened or reached at the start
        unreachable,  // the connection was lost (the server stopped, the network cut)
        full,         // no space left
        damaged,      // not a team store, or a damaged one
        schema,       // the store's schema is older or newer than this program's
        constraint,   // a row broke a constraint (a bug, or a race the caller checks for)
        other,
    };
    StoreError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    Kind kind() const { return kind_; }

  private:
    Kind kind_;
};

// A backend's prepared statement with its parameters and, once run, its current row.
class StatementImpl {
  public:
    virtual ~StatementImpl() = default;
    virtual void bind_int64(int index, std::int64_t value) = 0;
    virtual void bind_double(int index, double value) = 0;
    virtual void bind_text(int index, std::string_view value) = 0;
    virtual void bind_null(int index) = 0;
    // Runs the statement (on the first call) and moves to the next row: false after the last.
    virtual bool step() = 0;
    // Runs the statement to its end; returns the rows it inserted, updated or deleted.
    virtual int exec() = 0;
    // Makes the statement ready to run again, its parameters kept.
    virtual void reset() = 0;
    // The number of columns of a row.
    virtual int column_count() const = 0;
    // The current row's column `index` (from 0).
    virtual bool is_null(int index) const = 0;
    virtual std::int64_t int64(int index) const = 0;
    virtual double real(int index) const = 0;
    virtual std::string text(int index) const = 0;
};

// One connection.
class Db {
  public:
    enum class Engine { sqlite, postgresql };

    virtual ~Db() = default;
    virtual Engine engine() const = 0;
    virtual std::unique_ptr<StatementImpl> prepare(std::string_view sql) = 0;
    // Runs one or more statements without parameters or rows (schema, pragmas).
    virtual void exec(const std::string& sql) = 0;

    // A write's turn. `alone`: no other writer of the store runs meanwhile. `shared` (a claim,
    // SPEC 16): shared writes run side by side, while every write `alone` still runs alone.
    // PostgreSQL takes the writers' advisory lock shared, and a shared write that appends to a
    // log read by id as a cursor (Change::activity, Change::messages) takes the appenders' lock
    // before its first row there, to its commit, so that those rows still commit in the order of
    // their ids. SQLite has one writer at a time anyway:
    // there a shared write is a write alone. Code inside a shared write must only take rows by
    // row lock (FOR UPDATE SKIP LOCKED) or conditional UPDATE, never decide from a read of rows
    // another shared write may change.
    enum class Turn { alone, shared };

    // The write path (Store::write): one transaction in its turn (SQLite: the writers' turn and
    // BEGIN IMMEDIATE; PostgreSQL: BEGIN and a transaction-level advisory lock). commit_write
    // makes it durable and visible and wakes every ChangeWatch of the store (SQLite: after the
    // commit, through the home's FIFOs; PostgreSQL: a NOTIFY in the transaction). rollback_write
    // never throws.
    virtual void begin_write(Turn turn) = 0;
    virtual void commit_write() = 0;
    virtual void rollback_write() noexcept = 0;

    // What a write changes, as the repository that changes it says (writes()), for a backend to
    // act on, never on the SQL's text. PostgreSQL notifies the inboxes' channel at the commit of
    // a write that stored a message (ChangeWatch::Wake::messages); a shared write takes the
    // appenders' lock before its first row of a log read by id as a cursor (see Turn). SQLite
    // wakes every watch at every commit, whatever changed.
    enum class Change : unsigned {
        messages = 1u << 0,  // a message stored (state/messages.hpp)
        activity = 1u << 1,  // an entry appended to the activity log (state/activity.hpp)
    };
    // Said by a repository inside a write, before the statement that makes the change runs; the
    // marks last until the write commits or rolls back.
    void writes(Change what) { changes_ |= static_cast<unsigned>(what); }

  protected:
    // Whether the write under way said it changes `what`.
    bool changes(Change what) const { return (changes_ & static_cast<unsigned>(what)) != 0; }
    // The write's marks dropped: a backend calls it as a write begins, commits or rolls back.
    void forget_changes() { changes_ = 0; }

  private:
    unsigned changes_ = 0;  // Change bits
};

// A column of the current row.
class Column {
  public:
    Column(const StatementImpl& statement, int index) : statement_(statement), index_(index) {}
    bool isNull() const { return statement_.is_null(index_); }
    std::int64_t getInt64() const { return statement_.int64(index_); }
    int getInt() const { return static_cast<int>(statement_.int64(index_)); }
    double getDouble() const { return statement_.real(index_); }
    std::string getString() const { return statement_.text(index_); }

  private:
    const StatementImpl& statement_;
    int index_;
};

// A statement of one connection. Parameters are numbered from 1, as `?N`.
class Statement {
  public:
    Statement(Db& db, std::string_view sql) : impl_(db.prepare(sql)) {}

    template <std::integral T>
    void bind(int index, T value) {
        impl_->bind_int64(index, static_cast<std::int64_t>(value));
    }
    void bind(int index, double value) { impl_->bind_double(index, value); }
    void bind(int index, const std::string& value) { impl_->bind_text(index, value); }
    void bind(int index, std::string_view value) { impl_->bind_text(index, value); }
    void bind(int index, const char* value) { impl_->bind_text(index, value); }
    void bind(int index) { impl_->bind_null(index); }  // NULL

    bool executeStep() { return impl_->step(); }
    int exec() { return impl_->exec(); }
    void reset() { impl_->reset(); }
    Column getColumn(int index) const { return Column(*impl_, index); }
    int getColumnCount() const { return impl_->column_count(); }

  private:
    std::unique_ptr<StatementImpl> impl_;
};

}  // namespace team
