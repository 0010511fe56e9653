// A write that shares the writers' turn with others of its kind (SPEC 16): a claim. Store::write
// gives each write the whole store; claims from many homes would then take turns behind one lock
// (217 claims/s from 12 claimers on PostgreSQL). A shared write instead:
// - PostgreSQL: takes the writers' advisory lock shared, so claims run side by side while every
//   other write still runs alone; each claim locks the rows it takes (FOR UPDATE SKIP LOCKED, a
//   conditional UPDATE), and its first INSERT takes the appenders' lock to its commit, so that
//   rows read by id as cursors (activity, messages) still commit in the order of their ids.
// - SQLite: is a whole write (SQLite has one writer at a time anyway).
// Code inside a shared write must only take rows by row lock or conditional UPDATE, never decide
// from a read of rows another shared write may change.
#pragma once

#include <type_traits>

#include "state/store.hpp"

namespace team {

// Begins the shared write on db (see above); Db::commit_write / rollback_write end it.
void begin_shared_write(Db& db);

template <class Fn>
auto shared_write(Store& store, Fn&& fn) -> decltype(fn()) {
    begin_shared_write(store.db());
    try {
        if constexpr (std::is_void_v<decltype(fn())>) {
            fn();
            store.db().commit_write();
        } else {
            auto result = fn();
            store.db().commit_write();
            return result;
        }
    } catch (...) {
        store.db().rollback_write();
        throw;
    }
}

}  // namespace team
