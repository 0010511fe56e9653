#include "ops/workers.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace team::ops {

struct Workers::State {
    std::mutex mutex;
    std::condition_variable ready;    // a job, or the stop
    std::condition_variable changed;  // a worker ended
    std::deque<Job> jobs;             // under mutex
    // Workers not running a job, those still starting included, under mutex: a job queued
    // while every one of them has a job waiting for it already gets a new worker.
    std::size_t free = 0;
    std::size_t alive = 0;  // under mutex
    bool stopping = false;  // under mutex

    static void work(std::shared_ptr<State> self) {
        {
            CoreCache cores;
            std::unique_lock lock(self->mutex);
            for (;;) {
                self->ready.wait(lock, [&] { return self->stopping || !self->jobs.empty(); });
                if (self->jobs.empty()) break;  // stopping, nothing left to run
                Job job = std::move(self->jobs.front());
                self->jobs.pop_front();
                --self->free;
                lock.unlock();
                job(cores);
                job = nullptr;  // what it holds goes before the worker waits again
                lock.lock();
                ++self->free;
            }
            --self->free;
        }  // the cores closed before the pool is told this worker is gone
        std::lock_guard lock(self->mutex);
        --self->alive;
        self->changed.notify_all();
    }
};

Workers::Workers() : state_(std::make_shared<State>()) {}

Workers::~Workers() {
    {
        std::lock_guard lock(state_->mutex);
        state_->stopping = true;
    }
    state_->ready.notify_all();
}

bool Workers::post(Job job) {
    std::lock_guard lock(state_->mutex);
    if (state_->stopping) return false;
    if (state_->free <= state_->jobs.size()) {
        std::thread(State::work, state_).detach();  // throws std::system_error: nothing changed
        ++state_->alive;
        ++state_->free;
    }
    state_->jobs.push_back(std::move(job));
    state_->ready.notify_one();
    return true;
}

bool Workers::stop(std::optional<std::chrono::milliseconds> budget) {
    std::unique_lock lock(state_->mutex);
    state_->stopping = true;
    state_->ready.notify_all();
    auto done = [&] { return state_->alive == 0; };
    if (!budget) {
        state_->changed.wait(lock, done);
        return true;
    }
    return state_->changed.wait_for(lock, *budget, done);
}

}  // namespace team::ops
