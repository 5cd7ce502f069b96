# SPDX-License-Identifier: GPL-2.0-or-later
"""The Python checks' one way to wait (scripts/vm-checks, scripts/multibox-test; the shell
checks have scripts/checks.sh): a deadline, and what did not come named for the failure that
follows."""

import time


class Waits:
    """`wait_for` polls a condition until it holds or its deadline passes. Each deadline is
    `patience` times the one given (what an idle machine needs): a wait ends as soon as what it
    waits for comes, so a long deadline costs nothing then, and a starved machine still sees it
    come. What did not come is kept until `missed()` takes it."""

    def __init__(self, patience=1.0):
        self.patience = patience
        self._missed = []

    def wait_for(self, what, condition, seconds, step=0.1):
        seconds *= self.patience
        deadline = time.monotonic() + seconds
        while True:
            if condition():
                return True
            if time.monotonic() >= deadline:
                self._missed.append(f"{what} (within {seconds:g} s)")
                return False
            time.sleep(step)

    def missed(self):
        """What the waits since the last call did not see come, joined; then forgotten."""
        text = "; ".join(self._missed)
        self._missed.clear()
        return text
