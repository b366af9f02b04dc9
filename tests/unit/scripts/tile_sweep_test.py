#!/usr/bin/env python3
"""scripts/tile_sweep.sh against a stand-in bench (no GPU): every sweep line
runs the bench once with its spec, shape, token counts and override, comments
and blank lines are skipped, a failing line is reported by its file line
while the others still run, sweep.json merges every line's rows, and the last
line of sweep.txt sums the bench's host phases over the lines that ran."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stand_in_bench import SCRIPTS, write_carry  # noqa: E402

SWEEP = textwrap.dedent("""\
    # a comment line
    weight=uint4,group=128,scale=fp16,act=fp16,out=fp16|8192x8192|1,8|

    weight=fail,group=128|4096x4096|1|
    weight=uint8,group=128,scale=fp16,act=fp16,out=fp16|4096x14336|16|16:tile=16x128x128,warps=1x8,stages=4,mma=wgmma:4
    """)


class TileSweepTest(unittest.TestCase):

    def run_sweep(self):
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        write_carry(os.path.join(folder, "carry"), us_base=10)
        sweep = os.path.join(folder, "sweep.txt")
        with open(sweep, "w") as handle:
            handle.write(SWEEP)
        out = os.path.join(folder, "out")
        calls = os.path.join(folder, "calls.txt")
        env = dict(os.environ, OUT=out, CALLS=calls)
        result = subprocess.run(
            ["bash", os.path.join(SCRIPTS, "tile_sweep.sh"),
             os.path.join(folder, "carry"), sweep],
            env=env, capture_output=True, text=True, check=False)
        with open(calls) as handle:
            call_lines = handle.read().splitlines()
        with open(os.path.join(out, "sweep.txt")) as handle:
            text = handle.read()
        with open(os.path.join(out, "sweep.json")) as handle:
            rows = json.load(handle)
        return result, call_lines, text, rows

    def test_runs_every_line_and_reports_the_failed_one(self):
        result, calls, text, rows = self.run_sweep()
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(len(calls), 3)
        self.assertIn("--ms 1,8", calls[0])
        self.assertNotIn("--override", calls[0])
        self.assertIn(
            "--override 16:tile=16x128x128,warps=1x8,stages=4,mma=wgmma:4",
            calls[2])
        # File line 4 is the failing one (comment and blank lines count).
        self.assertIn("line 4 failed", text)
        self.assertEqual([(r["line"], r["m"]) for r in rows],
                         [(2, 1), (2, 8), (5, 16)])
        self.assertIn("M=8 ", text)

    def test_last_line_sums_the_phases_of_the_lines_that_ran(self):
        _, _, text, _ = self.run_sweep()
        last = text.strip().splitlines()[-1]
        self.assertTrue(last.startswith("phases over 3 lines"), last)
        # Two layers printed phases (the failed line printed none).
        self.assertIn("2 layers: resolve 1.0 s, inputs 2.5 s, layers 0.5 s,"
                      " measure 4.0 s", last)


if __name__ == "__main__":
    unittest.main()
