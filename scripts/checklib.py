# SPDX-License-Identifier: GPL-2.0-or-later
"""The Python checks' one way to wait (scripts/vm-checks, scripts/multibox-test; the shell
checks have scripts/checks.sh): a deadline, and what did not come named for the failure that
follows."""

import random
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


# ---- checks that sample: their false-failure probability, from their own model ----

# What a check that samples may cost a correct program, per run: one in a million.
FALSE_FAILURE_BOUND = 1e-6


def missed_probability(shares, looks):
    """The probability that `looks` independent looks miss at least one of the beacons, each
    look catching beacon i with probability at least `shares[i]`: at most the sum of
    (1 - share)^looks (the union bound; for k beacons taking equal turns, k * ((k-1)/k)^looks)."""
    if looks < 0 or any(not 0 < share <= 1 for share in shares):
        raise ValueError(f"shares must be in (0, 1] and looks at least 0: {shares}, {looks}")
    return min(1.0, sum((1 - share) ** looks for share in shares))


def looks_for(shares, bound=FALSE_FAILURE_BOUND):
    """The fewest independent looks after which every beacon was caught but with probability at
    most `bound` (`missed_probability`): what a check that samples the air takes at most."""
    if not 0 < bound < 1:
        raise ValueError(f"bound must be in (0, 1): {bound}")
    looks = 0
    while missed_probability(shares, looks) > bound:
        looks += 1
    return looks


def turn_shares(turns):
    """Each beacon's least chance to be the one on the air at one look, for beacons taking turns
    of `turns` seconds (nominal) when each look starts after `uniform_pause(sum(turns))`:
    whatever the looks' own timing, the phase of a look in the real cycle then has a density at
    least floor(x)/x of the uniform one, x being the pause's span in real cycles; with a real
    cycle up to twice the nominal one (turns a loaded machine stretches), x >= 1 and that is at
    least a half. So a look catches beacon i with probability at least turns[i] / (2 * cycle),
    whatever the looks before it caught."""
    if not turns or any(turn <= 0 for turn in turns):
        raise ValueError(f"turns must be positive seconds: {turns}")
    cycle = sum(turns)
    return [turn / (2 * cycle) for turn in turns]


def uniform_pause(cycle):
    """The pause before each look of a check that samples turns (`turn_shares`): uniform over
    two nominal cycles, from a generator no clock or load can fall in step with."""
    return random.SystemRandom().uniform(0, 2 * cycle)
