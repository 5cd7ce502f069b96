// SPDX-License-Identifier: GPL-2.0-or-later
// Linux system headers Swift's Glibc module leaves out (epoll, timerfd), and a signal handler
// that must not be Swift: for WakeSet.swift and SignalWatcher.swift.
#ifndef CLINUX_H
#define CLINUX_H

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <stdint.h>
#include <unistd.h>

/// A timer descriptor readable every `period_ms` (non-blocking, close-on-exec); -1 on failure.
static inline int clinux_timer(int period_ms) {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd < 0) return -1;
    struct itimerspec spec = {
        .it_interval = { .tv_sec = period_ms / 1000, .tv_nsec = (long)(period_ms % 1000) * 1000000 },
        .it_value = { .tv_sec = period_ms / 1000, .tv_nsec = (long)(period_ms % 1000) * 1000000 },
    };
    if (timerfd_settime(fd, 0, &spec, 0) != 0) { close(fd); return -1; }
    return fd;
}

/// How many periods passed since the last call (0 if none).
static inline uint64_t clinux_timer_expirations(int fd) {
    uint64_t count = 0;
    if (read(fd, &count, sizeof count) != sizeof count) return 0;
    return count;
}

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

/// A descriptor that becomes readable when process `pid` ends (pidfd_open, Linux 5.3 on;
/// close-on-exec); -errno where the kernel has none (ENOSYS) or refuses it.
int clinux_pidfd_open(int pid);

/// Makes signal `signo` write one byte (its number) to `fd`, through sigaction with
/// SA_RESTART, and unblocks it for the calling thread. The handler is C and async-signal-safe:
/// it saves and restores errno, touches only a sig_atomic_t and calls only write(2).
/// Returns 0, or -errno.
int clinux_signal_to_pipe(int signo, int fd);

/// The number of the last signal handled by `clinux_signal_to_pipe`'s handler (0 if none).
int clinux_last_signal(void);

/// The version this build says (`beacon-emit --version`): a development build's, or the one
/// scripts/release-binary writes into the linked binary's field (after the marker
/// "BEACON-EMIT-BUILD-VERSION:", NUL-padded to 96 bytes in all), so that no source changes.
const char *clinux_build_version(void);

#endif
