#include "http/pool.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "base/cancel.hpp"

namespace team::http {

struct Pool::State {
    int stop_fd = -1;
    int wind_down_fd = -1;
    int waiters = 0;
    std::mutex mutex;
    std::condition_variable ready;       // a job for the workers, or the stop
    std::condition_variable wait_ready;  // a job for an idle waiting thread, or the stop
    std::deque<Job> jobs;                // under mutex
    std::deque<Job> waiting_jobs;        // under mutex
    int busy_waiters = 0;                // waiting calls admitted and not ended, under mutex
    // Waiting threads with nothing to do and no queued job promised to them, under mutex: the
    // threads waiting for a job minus the jobs queued. A job queued for an idle thread takes
    // one at once (post_waiting), so two jobs posted before it wakes never count on the same
    // thread (the second would wait behind the first's whole wait).
    int idle_waiters = 0;
    bool stopping = false;
    std::vector<std::thread> workers;

    void work() {
        set_thread_cancel_fd(stop_fd);
        set_thread_wind_down_fd(wind_down_fd);
        for (;;) {
            Job job;
            {
                std::unique_lock lock(mutex);
                ready.wait(lock, [&] { return stopping || !jobs.empty(); });
                if (stopping) return;
                job = std::move(jobs.front());
                jobs.pop_front();
            }
            job();
        }
    }

    // A waiting thread: runs the waiting calls given to it, one at a time, until the stop.
    static void wait_loop(std::shared_ptr<State> self) {
        set_thread_cancel_fd(self->stop_fd);
        set_thread_wind_down_fd(self->wind_down_fd);
        std::unique_lock lock(self->mutex);
        for (;;) {
            self->wait_ready.wait(lock,
                                  [&] { return self->stopping || !self->waiting_jobs.empty(); });
            if (self->waiting_jobs.empty()) return;  // stopping, nothing left to run
            Job job = std::move(self->waiting_jobs.front());
            self->waiting_jobs.pop_front();
            lock.unlock();
            job();
            job = nullptr;  // what it holds (a connection) goes before the thread waits again
            lock.lock();
            --self->busy_waiters;
            if (self->stopping) return;
            ++self->idle_waiters;
        }
    }
};

Pool::Pool(int workers, int waiters, int stop_fd, int wind_down_fd)
    : state_(std::make_shared<State>()) {
    state_->stop_fd = stop_fd;
    state_->wind_down_fd = wind_down_fd;
    state_->waiters = waiters;
    for (int i = 0; i < workers; ++i) {
        state_->workers.emplace_back([s = state_.get()] { s->work(); });
    }
}

Pool::~Pool() {
    stop();
}

void Pool::post(Job job) {
    {
        std::lock_guard lock(state_->mutex);
        if (state_->stopping) return;
        state_->jobs.push_back(std::move(job));
    }
    state_->ready.notify_one();
}

bool Pool::post_waiting(Job job) {
    std::unique_lock lock(state_->mutex);
    if (state_->stopping || state_->busy_waiters >= state_->waiters) return false;
    ++state_->busy_waiters;
    state_->waiting_jobs.push_back(std::move(job));
    if (state_->idle_waiters > 0) {
        --state_->idle_waiters;  // that thread is this job's
        lock.unlock();
        state_->wait_ready.notify_one();
        return true;
    }
    // No idle waiting thread: one more, for this job, so the threads never outnumber the bound.
    lock.unlock();
    std::thread(State::wait_loop, state_).detach();
    return true;
}

int Pool::waiters() const {
    return state_->waiters;
}

void Pool::stop() {
    std::deque<Job> dropped;  // destroyed outside the lock: they hold connections
    {
        std::lock_guard lock(state_->mutex);
        state_->stopping = true;
        dropped.swap(state_->jobs);
    }
    state_->ready.notify_all();
    state_->wait_ready.notify_all();
    for (auto& t : state_->workers) {
        if (t.joinable()) t.join();
    }
}

}  // namespace team::http
