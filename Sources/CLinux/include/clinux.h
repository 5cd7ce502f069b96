// SPDX-License-Identifier: GPL-2.0-or-later
// Linux system headers Swift's Glibc module leaves out, for the one Swift file that needs them.
#ifndef CLINUX_H
#define CLINUX_H

#include <sys/epoll.h>

/// epoll_event is packed on x86_64, which Swift cannot lay out: read and write it here.
static inline int clinux_epoll_add(int epoll, int fd) {
    struct epoll_event event = { .events = EPOLLIN, .data = { .fd = fd } };
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

static inline int clinux_epoll_remove(int epoll, int fd) {
    return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, 0);
}

/// Waits up to `timeout_ms` (0: not at all) and writes the ready descriptors to `fds`.
static inline int clinux_epoll_ready(int epoll, int *fds, int max, int timeout_ms) {
    struct epoll_event events[64];
    if (max > 64) max = 64;
    int count = epoll_wait(epoll, events, max, timeout_ms);
    for (int i = 0; i < count; i++) fds[i] = events[i].data.fd;
    return count;
}

#endif
