# SPDX-License-Identifier: GPL-2.0-or-later
"""checklib's sampling bound, against figures computed by hand (scripts/script-test runs it)."""

import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checklib import looks_for, missed_probability, turn_shares  # noqa: E402


class SamplingBound(unittest.TestCase):
    def test_three_beacons_taking_turns_need_37_looks(self):
        # 3 * (2/3)^n <= 1e-6: n >= ln(3e6) / ln(1.5) = 36.8
        shares = [1 / 3] * 3
        self.assertEqual(looks_for(shares), 37)
        self.assertGreater(missed_probability(shares, 36), 1e-6)
        self.assertLessEqual(missed_probability(shares, 37), 1e-6)

    def test_twelve_looks_at_three_beacons_fail_one_run_in_43(self):
        # The check the issue found red: 3 * (2/3)^12 = 0.0231
        self.assertAlmostEqual(missed_probability([1 / 3] * 3, 12), 3 * (2 / 3) ** 12)
        self.assertAlmostEqual(missed_probability([1 / 3] * 3, 12), 0.0231, places=4)

    def test_two_beacons_need_21_looks(self):
        # 2 * (1/2)^n <= 1e-6: n >= log2(2e6) = 20.9
        self.assertEqual(looks_for([0.5, 0.5]), 21)

    def test_pauses_halve_each_share(self):
        # 3 * (5/6)^n <= 1e-6: n >= ln(3e6) / ln(6/5) = 81.8
        for share in turn_shares([0.3] * 3):
            self.assertAlmostEqual(share, 1 / 6)
        self.assertEqual(looks_for(turn_shares([1, 1, 1])), 82)
        self.assertEqual(looks_for(turn_shares([1, 1])), math.ceil(math.log(2e6) / math.log(4 / 3)))

    def test_unequal_turns_bound_the_shorter(self):
        # ours 1 s, another program's 2 s: 1/6 and 1/3; (5/6)^n + (2/3)^n <= 1e-6 at n = 76
        self.assertEqual(turn_shares([1, 2]), [1 / 6, 1 / 3])
        n = looks_for(turn_shares([1, 2]))
        self.assertEqual(n, 76)
        self.assertGreater((5 / 6) ** (n - 1) + (2 / 3) ** (n - 1), 1e-6)

    def test_one_beacon_always_on_air_needs_one_look(self):
        self.assertEqual(looks_for([1.0]), 1)
        self.assertEqual(missed_probability([1.0], 0), 1.0)

    def test_nonsense_is_refused(self):
        for shares, looks in [([0], 3), ([1.5], 3), ([0.5], -1)]:
            with self.assertRaises(ValueError):
                missed_probability(shares, looks)
        with self.assertRaises(ValueError):
            looks_for([0.5], bound=0)
        with self.assertRaises(ValueError):
            turn_shares([1, 0])


if __name__ == "__main__":
    unittest.main()
