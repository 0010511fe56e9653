#include "base/cancel.hpp"

namespace team {

namespace {
thread_local int t_cancel_fd = -1;
}  // namespace

int set_thread_cancel_fd(int fd) {
    int previous = t_cancel_fd;
    t_cancel_fd = fd;
    return previous;
}

int thread_cancel_fd() {
    return t_cancel_fd;
}

}  // namespace team
