#!/usr/bin/env python3
"""scripts/sweep_round.sh against two stand-in benches (no GPU): the A/B runs
twice with the tile sweep of the new build between them, every table lands in
one sweeps.tgz, and summary.txt says each step's exit and the A/B's ratio
line; with too little of BUDGET_S left, the tile sweep and the second A/B are
skipped and the summary says so."""

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stand_in_bench import SCRIPTS, write_bench, write_carry  # noqa: E402

AB_SWEEP = textwrap.dedent("""\
    weight=uint4,group=128,scale=fp16,act=fp16,out=fp16|8192x8192|1,8|
    """)
TILE_SWEEP = textwrap.dedent("""\
    weight=uint8,group=128,scale=fp16,act=fp16,out=fp16|4096x4096|16|
    """)


class SweepRoundTest(unittest.TestCase):

    def run_round(self, budget_s, with_tiles=True):
        """Runs sweep_round.sh on a fresh carry (new bench 10 + M + 0.5 µs,
        old 12 + M + 0.5); returns summary.txt and the tarball's members."""
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        carry = os.path.join(folder, "carry")
        write_carry(carry, us_base=10)
        write_bench(os.path.join(carry, "old", "bin", "hummingd_gemm_bench"),
                    us_base=12)
        ab_file = os.path.join(folder, "ab.txt")
        tile_file = os.path.join(folder, "tiles.txt")
        for path, text in ((ab_file, AB_SWEEP), (tile_file, TILE_SWEEP)):
            with open(path, "w") as handle:
                handle.write(text)
        out = os.path.join(folder, "out")
        command = ["bash", os.path.join(SCRIPTS, "sweep_round.sh"), carry,
                   ab_file] + ([tile_file] if with_tiles else [])
        result = subprocess.run(
            command, env=dict(os.environ, OUT=out, BUDGET_S=str(budget_s)),
            capture_output=True, text=True, check=False)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        with open(os.path.join(out, "summary.txt")) as handle:
            summary = handle.read()
        with tarfile.open(os.path.join(out, "sweeps.tgz")) as archive:
            members = {member.name: archive.extractfile(member).read().decode()
                       for member in archive.getmembers() if member.isfile()}
        self.assertFalse(os.path.exists(os.path.join(out, "sweeps")),
                         "the folder is left only as the tarball")
        return summary, members

    def test_two_ab_runs_around_the_tile_sweep(self):
        summary, members = self.run_round(budget_s=600)
        self.assertRegex(summary, r"ab1: exit 0 at \d+ s")
        self.assertRegex(summary, r"tiles: exit 0 at \d+ s")
        self.assertRegex(summary, r"ab2: exit 0 at \d+ s")
        # M = 1 and 8 on 8192²: 11.5 / 13.5 and 18.5 / 20.5, twice.
        self.assertEqual(
            summary.count("new / old over 2 rows: 0.852-0.902 (median"), 2)
        for run in ("ab1", "ab2"):
            self.assertRegex(members[f"sweeps/{run}/ab.txt"],
                             r"M=1 +new +11\.50 old +13\.50 us +0\.852x")
        # The tile sweep timed the new build only: 10 + 16 + 0.5.
        self.assertIn("26.5", members["sweeps/tiles/sweep.txt"])
        self.assertIn("sweeps/gpu.txt", members)
        order = [line.split(":")[0] for line in summary.splitlines()
                 if line.startswith(("ab1:", "tiles:", "ab2:"))]
        self.assertEqual(order, ["ab1", "tiles", "ab2"])

    def test_the_second_ab_run_is_skipped_when_the_budget_is_spent(self):
        # 100 s: the first A/B always runs; the tile sweep would leave the
        # second under its 150 s, and the second has under 120 s.
        summary, members = self.run_round(budget_s=100)
        self.assertRegex(summary, r"ab1: exit 0 at \d+ s")
        self.assertRegex(summary, r"tiles: skipped, \d+ s left")
        self.assertRegex(summary, r"ab2: skipped, \d+ s left")
        self.assertIn("sweeps/ab1/ab.txt", members)
        self.assertNotIn("sweeps/ab2/ab.txt", members)

    def test_without_a_tile_file_only_the_two_ab_runs(self):
        summary, members = self.run_round(budget_s=600, with_tiles=False)
        self.assertNotIn("tiles", summary)
        self.assertIn("sweeps/ab2/ab.txt", members)


if __name__ == "__main__":
    unittest.main()
