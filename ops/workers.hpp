// A pool of threads that grows on demand, for a face that runs operations as they come (`team
// mcp`'s tools/call, the far end of a host link): a job takes an idle worker, else a new one is
// started, so there are as many workers as jobs were ever running at once, and a job that waits
// never holds up another. Each worker keeps its cores (ops/core_cache.hpp) between jobs.
// (`team serve` bounds its waiting calls instead: http/pool.hpp.)
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "ops/core_cache.hpp"

namespace team::ops {

class Workers {
  public:
    using Job = std::function<void(CoreCache&)>;

    Workers();
    // Takes no more jobs and lets the workers go without waiting for them; they end when their
    // queue is empty, and keep the pool's state alive until then.
    ~Workers();
    Workers(const Workers&) = delete;
    Workers& operator=(const Workers&) = delete;

    // Runs `job` on a worker; false, and nothing done, once stopping. Throws std::system_error
    // when a worker was needed and no thread could be started.
    bool post(Job job);

    // Takes no more jobs (the queued ones still run) and waits up to `budget` (none: as long as
    // it takes) for every worker to end, its cores closed; true when all did.
    bool stop(std::optional<std::chrono::milliseconds> budget = std::nullopt);

  private:
    struct State;
    std::shared_ptr<State> state_;
};

}  // namespace team::ops
