#!/usr/bin/env python3
"""scripts/ab_sweep.sh against two stand-in benches (no GPU): both builds run
every line of the sweep, ab.txt puts each case's two times side by side with
new / old and ends with the range and median over the rows, both builds'
phases lines and exit codes; ab.json holds both builds' rows. And
scripts/patch_ab.sh, which runs it with a patch's bench as new and the
carry's own as old."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stand_in_bench import SCRIPTS, write_bench, write_carry  # noqa: E402

SWEEP = textwrap.dedent("""\
    weight=uint4,group=128,scale=fp16,act=fp16,out=fp16|8192x8192|1,8|
    weight=uint8,group=128,scale=fp16,act=fp16,out=fp16|4096x4096|16|
    """)


class AbSweepTest(unittest.TestCase):

    def run_ab(self, script, place_benches):
        """Runs script on a fresh carry that place_benches(carry) fills;
        returns ab.txt and ab.json."""
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        carry = os.path.join(folder, "carry")
        place_benches(carry)
        sweep = os.path.join(folder, "sweep.txt")
        with open(sweep, "w") as handle:
            handle.write(SWEEP)
        out = os.path.join(folder, "out")
        result = subprocess.run(
            ["bash", os.path.join(SCRIPTS, script), carry, sweep],
            env=dict(os.environ, OUT=out), capture_output=True, text=True,
            check=False)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        with open(os.path.join(out, "ab.txt")) as handle:
            text = handle.read()
        with open(os.path.join(out, "ab.json")) as handle:
            both = json.load(handle)
        return text, both

    def test_side_by_side_with_ratios_and_their_median(self):
        def place(carry):
            # new: us = 10 + M + 0.5; old: us = 12 + M + 0.5.
            write_carry(carry, us_base=10)
            write_bench(
                os.path.join(carry, "old", "bin", "hummingd_gemm_bench"),
                us_base=12)
            write_text(os.path.join(carry, "COMMIT"), "newhash")
            write_text(os.path.join(carry, "old", "COMMIT"), "oldhash")

        text, both = self.run_ab("ab_sweep.sh", place)
        # M = 1 on 8192²: 11.5 against 13.5 us.
        self.assertRegex(text, r"M=1 +new +11\.50 old +13\.50 us +0\.852x")
        self.assertRegex(text, r"M=16 +new +26\.50 old +28\.50 us +0\.930x")
        # Ratios 11.5/13.5, 18.5/20.5, 26.5/28.5: median 18.5/20.5.
        self.assertIn("new / old over 3 rows: 0.852-0.930 (median 0.902)",
                      text)
        self.assertIn("new: phases over 2 lines", text)
        self.assertIn("old: phases over 2 lines", text)
        self.assertRegex(text, r"\ngpu: .*\n")
        self.assertIn("new build: newhash (exit 0); old: oldhash (exit 0)",
                      text)
        self.assertEqual(len(both["new"]), 3)
        self.assertEqual(len(both["old"]), 3)
        self.assertEqual(sorted(r["us"] for r in both["old"]),
                         [13.5, 20.5, 28.5])

    def test_patch_ab_runs_the_patch_bench_as_new(self):
        def place(carry):
            write_carry(carry, us_base=12)  # main's bench: old
            write_bench(
                os.path.join(carry, "patch", "bin", "hummingd_gemm_bench"),
                us_base=10)
            write_text(os.path.join(carry, "COMMIT"), "mainhash")
            write_text(os.path.join(carry, "patch", "NAME"), "v99")

        text, _ = self.run_ab("patch_ab.sh", place)
        self.assertIn("new / old over 3 rows: 0.852-0.930 (median 0.902)",
                      text)
        self.assertIn(
            "new build: mainhash+v99 (exit 0); old: mainhash (exit 0)", text)


def write_text(path, text):
    with open(path, "w") as handle:
        handle.write(text + "\n")


if __name__ == "__main__":
    unittest.main()
