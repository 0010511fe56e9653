// The cores a long-running face keeps between calls, one per identity (home, team, caller,
// face), so a call pays neither the store's open nor tmux's set-up: each worker of `team mcp`
// and of a host link's far end (ops/workers.hpp), each thread of `team serve`'s pool. Not
// shared between threads: a Core is one thread's.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "ops/core.hpp"

namespace team::ops {

struct Result;

class CoreCache {
  public:
    // Past `bound` identities (names that are no teams, asked for one after another) the cache
    // starts again rather than grow without end.
    explicit CoreCache(std::size_t bound = 64) : bound_(bound) {}

    // The core of `identity`, made on first use.
    Core& get(const Identity& identity);
    // After a call: a call that failed may have left its core in a state nobody chose (a store
    // that could not open), so the next call of that identity starts from a fresh one.
    void after(const Identity& identity, const Result& result);
    std::size_t size() const { return cores_.size(); }
    void clear() { cores_.clear(); }

  private:
    std::size_t bound_;
    std::map<std::string, std::unique_ptr<Core>> cores_;
};

}  // namespace team::ops
