# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
#
# The shell checks' reporting and their one way to wait (POSIX sh: sourced by
# scripts/vm-systemd-checks and scripts/vm-arm64-checks, as vm-checks' Python has its own):
#   wait_for WHAT SECONDS COMMAND...   true as soon as COMMAND succeeds; false after SECONDS,
#                                      WHAT (what the check expected) kept for the next check
#   check NAME STATUS DETAIL           "VMCHECK PASS NAME", or "VMCHECK FAIL NAME: why" with
#                                      what the waits before it did not see come; then
#                                      check_failed (if the script defines it) for more detail
missed=""

uptime_seconds() { cut -d' ' -f1 /proc/uptime; }

# Whether uptime A has reached uptime B (fractions of a second count).
reached() { awk -v now="$1" -v deadline="$2" 'BEGIN { exit !(now >= deadline) }'; }

wait_for() {
    what=$1
    deadline=$(awk -v now="$(uptime_seconds)" -v seconds="$2" 'BEGIN { print now + seconds }')
    within=$2
    shift 2
    while :; do
        "$@" >/dev/null 2>&1 && return 0
        if reached "$(uptime_seconds)" "$deadline"; then
            missed="${missed:+$missed; }$what (within $within s)"
            return 1
        fi
        sleep 0.1
    done
}

check() {
    if [ "$2" -eq 0 ]; then
        echo "VMCHECK PASS $1"
    else
        why=$(printf '%s' "$3" | tr '\n' ' ' | cut -c1-1500)
        echo "VMCHECK FAIL $1: ${missed:+[did not come: $missed] }$why"
        if command -v check_failed >/dev/null 2>&1; then check_failed; fi
    fi
    missed=""
    echo "VMINFO uptime $(uptime_seconds) s"
}
