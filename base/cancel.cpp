#include "base/cancel.hpp"

namespace team {

namespace {
thread_local int t_cancel_fd = -1;
thread_local int t_wind_down_fd = -1;
thread_local bool t_asked = false;
}  // namespace

int set_thread_cancel_fd(int fd) {
    int previous = t_cancel_fd;
    t_cancel_fd = fd;
    return previous;
}

int thread_cancel_fd() {
    return t_cancel_fd;
}

int set_thread_wind_down_fd(int fd) {
    int previous = t_wind_down_fd;
    t_wind_down_fd = fd;
    return previous;
}

int thread_asked_wait_fd() {
    return t_asked ? t_wind_down_fd : -1;
}

AskedWait::AskedWait() : previous_(t_asked) {
    t_asked = true;
}

AskedWait::~AskedWait() {
    t_asked = previous_;
}

}  // namespace team
