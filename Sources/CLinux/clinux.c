// SPDX-License-Identifier: GPL-2.0-or-later
// The signal handler lives here, in C: a Swift closure as a handler could touch the Swift
// runtime (retain counts, exclusivity checks, arrays), none of which is async-signal-safe.
// Everything else is inline in include/clinux.h.
#include "clinux.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/// pidfd_open's number: the same on every architecture (the table shared since Linux 5.1);
/// glibc before 2.36 has no wrapper, and its headers may lack the name.
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int clinux_pidfd_open(int pid) {
    long fd = syscall(SYS_pidfd_open, pid, 0);
    return fd < 0 ? -errno : (int)fd;
}

#define CLINUX_SIGNALS 65

/// Descriptor + 1 for each signal (0: none), so that zeroed static storage means "none".
static volatile sig_atomic_t signal_fd_plus_one[CLINUX_SIGNALS];
static volatile sig_atomic_t last_signal;

static void write_signal(int signo) {
    int saved = errno;
    last_signal = signo;
    if (signo > 0 && signo < CLINUX_SIGNALS) {
        int fd = (int)signal_fd_plus_one[signo] - 1;
        if (fd >= 0) {
            unsigned char byte = (unsigned char)signo;
            ssize_t ignored = write(fd, &byte, 1);  // a full pipe already says "a signal came"
            (void)ignored;
        }
    }
    errno = saved;
}

int clinux_signal_to_pipe(int signo, int fd) {
    if (signo <= 0 || signo >= CLINUX_SIGNALS || fd < 0) return -EINVAL;
    signal_fd_plus_one[signo] = fd + 1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = write_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(signo, &action, 0) != 0) return -errno;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signo);
    int result = pthread_sigmask(SIG_UNBLOCK, &set, 0);
    return result == 0 ? 0 : -result;
}

int clinux_last_signal(void) { return (int)last_signal; }

/* The marker and the version after it, one field of 96 bytes that scripts/release-binary
   overwrites in the linked binary (used: kept whole in the read-only data). */
__attribute__((used)) static const char build_version[96] = "BEACON-EMIT-BUILD-VERSION:0.0.0-dev";

const char *clinux_build_version(void) { return build_version + sizeof "BEACON-EMIT-BUILD-VERSION:" - 1; }
