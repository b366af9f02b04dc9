#!/usr/bin/env python3
"""scripts/decode_round.sh against stand-in benches (no GPU, so its GPU suite
fails and its cuBLAS step finds no PyTorch): with an old build's bench in the
carry it times the same decode cases on that build into
bench-old/gemm_bench.json (on a kernel cache of its own, without the script's
extra flags), restates them on the new table's GPU and ceilings, and prints
decode_table_compare.py's verdict of old against new; OLD_TABLE=0, or a
carry without an old bench, skips both; the group table takes the decode
table's ceilings."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stand_in_bench import SCRIPTS, write_bench, write_carry  # noqa: E402

SPEC = "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16"


class DecodeRoundTest(unittest.TestCase):

    def run_round(self, with_old=True, gpu="", args=(), **env):
        """Runs decode_round.sh on a fresh carry (new bench 10 + M + 0.5 µs,
        its rows naming `gpu` when given; old 12 + M + 0.5, naming none);
        returns (summary.txt, the output folder)."""
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        carry = os.path.join(folder, "carry")
        write_carry(carry, us_base=10, gpu=gpu)
        if with_old:
            write_bench(os.path.join(carry, "old", "bin", "hummingd_gemm_bench"),
                        us_base=12)
            with open(os.path.join(carry, "old", "COMMIT"), "w") as handle:
                handle.write("abc1234\n")
        out = os.path.join(folder, "out")
        self.calls = os.path.join(folder, "calls.txt")
        subprocess.run(
            ["bash", os.path.join(SCRIPTS, "decode_round.sh"), carry, *args],
            env=dict(dict(os.environ, OUT=out, SHAPES="8192x8192", MS="1,8,256",
                          SPECS=SPEC, GROUP_SPECS="none", CALLS=self.calls), **env),
            capture_output=True, text=True, check=False)
        with open(os.path.join(out, "summary.txt")) as handle:
            return handle.read(), out

    def test_the_old_build_times_the_same_cases_and_is_compared(self):
        summary, out = self.run_round()
        self.assertIn("== the old build's decode table (abc1234, exit 0)", summary)
        with open(os.path.join(out, "bench-old", "gemm_bench.json")) as handle:
            old_rows = json.load(handle)
        self.assertEqual([(row["n"], row["k"], row["m"]) for row in old_rows],
                         [(8192, 8192, 1), (8192, 8192, 8), (8192, 8192, 256)])
        self.assertEqual(old_rows[0]["us"], 13.5)
        # New 11.5 / 18.5 / 266.5 against old 13.5 / 20.5 / 268.5.
        self.assertIn("new / old, M <= 8: 0.852-0.902x (median 0.877, 2 rows)",
                      summary)
        self.assertIn("rows at M > 64 on unchanged kernels (1) slower than "
                      "1.120x: 0", summary)
        self.assertIn("== decode_table_compare exit 0", summary)
        # New, then old; the old one alone on a cache folder of its own.
        with open(self.calls) as handle:
            calls = handle.read().splitlines()
        self.assertEqual(len(calls), 2, calls)
        self.assertNotIn("--cache_dir", calls[0])
        self.assertRegex(calls[1], r"--cache_dir /\S+")
        self.assertFalse(os.path.exists(os.path.join(out, "bench-old.txt")),
                         "the old bench's log travels in logs.tar.gz")

    # The old bench predates the "gpu" key: its rows ran on the GPU the new
    # table names, not on the H200 that unnamed rows default to.
    def test_the_old_rows_ran_on_the_gpu_the_new_table_names(self):
        h100 = "NVIDIA H100 80GB HBM3"
        summary, out = self.run_round(gpu=h100, args=("--override", "8:tile=x:1"),
                                      GROUP_SPECS=SPEC)
        self.assertIn("old rows restated on the new table's GPU, exit 0", summary)
        self.assertIn(f"GPU: {h100}\n", summary)
        self.assertIn("== decode_table_compare exit 0", summary)
        # Restated as committed: the pair compares as it is.
        with open(os.path.join(out, "bench-old", "gemm_bench.json")) as handle:
            old_rows = json.load(handle)
        self.assertEqual({row["gpu"] for row in old_rows}, {h100})
        self.assertEqual([row["us"] for row in old_rows], [13.5, 20.5, 268.5])
        # Calls: new decode table, old, group table; the extra flags reach
        # the new build's table only, the decode table's ceilings the group
        # table.
        with open(self.calls) as handle:
            calls = handle.read().splitlines()
        self.assertEqual(len(calls), 3, calls)
        self.assertIn("--override 8:tile=x:1", calls[0])
        self.assertNotIn("--override", calls[1])
        self.assertIn("--copy_tbps 3.02 --tensor_tflops 771.5", calls[2])

    def test_old_table_zero_or_no_old_bench_skips_it(self):
        for summary, out in (self.run_round(OLD_TABLE="0"),
                             self.run_round(with_old=False)):
            self.assertNotIn("old build", summary)
            self.assertNotIn("decode_table_compare", summary)
            self.assertFalse(os.path.exists(os.path.join(out, "bench-old")))
            self.assertTrue(os.path.exists(os.path.join(out, "bench",
                                                        "gemm_bench.json")))


if __name__ == "__main__":
    unittest.main()
