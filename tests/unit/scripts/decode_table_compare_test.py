#!/usr/bin/env python3
"""scripts/decode_table_compare.py on small made-up tables: each M > 64 gate
(changed kernels per row, the per-M median, the medians per M and spec and
per M and kernel, unchanged kernels per row) trips just above its limit and
not below, on its own data, decode rows never trip them, flips,
missing cases and numerics failures are reported, the cuBLAS-normalized
median is the ratio of ratios, old times are judged against the new targets,
and tables of two GPUs are refused."""

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.environ.get(
    "HUMMINGD_SCRIPTS",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts")))
import decode_table_compare  # noqa: E402

SPEC = "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16"


def row(m, us, *, n=8192, k=8192, target=None, meets=None, cublas=100.0,
        numerics_ok=True, kernel="tile=8x32x1024", splits=1, spec=SPEC, gpu=None):
    """A bench row; with gpu=None, one of a table written before the bench
    named its GPU."""
    fields = {"spec": spec, "n": n, "k": k, "m": m, "us": us, "roofline_us": 1.0,
              "fraction": 0.5, "cublas_us": cublas, "target_us": target,
              "meets": meets, "rel_err": 1e-4, "non_finite": 0,
              "numerics_ok": numerics_ok}
    if gpu is not None:
        fields.update({"gpu": gpu, "copy_tbps": 3.0, "tensor_tflops": 800.0})
    fields.update({"kernel": kernel, "splits": splits})
    return fields


def table(*rows):
    return {decode_table_compare.case_key(r): r for r in rows}


class CompareTest(unittest.TestCase):

    # Four layers at M = 1024, the first on a kernel that may change.
    def prefill(self, first_us, others_us, first_kernel="tile=8x32x1024"):
        return table(row(1, 10.0, target=10.4, meets=True),
                     row(1024, first_us, kernel=first_kernel),
                     *(row(1024, others_us, n=n) for n in (1024, 2048, 4096)))

    def test_a_changed_kernel_trips_just_above_its_limit_only(self):
        old = self.prefill(200.0, 100.0)
        lines, holds = decode_table_compare.compare(
            old, self.prefill(205.8, 100.0, "tile=64x128x128"), 1.03)
        self.assertTrue(holds, lines)
        self.assertIn("rows at M > 64 on a new kernel or split count (1) slower "
                      "than 1.030x: 0", lines)
        lines, holds = decode_table_compare.compare(
            old, self.prefill(206.2, 100.0, "tile=64x128x128"), 1.03)
        self.assertFalse(holds)
        self.assertIn("rows at M > 64 on a new kernel or split count (1) slower "
                      "than 1.030x: 1", lines)
        self.assertTrue(any("206.20 us (1.031x)" in line for line in lines), lines)
        # The same slowdown on an unchanged kernel is one run's spread.
        lines, holds = decode_table_compare.compare(
            old, self.prefill(206.2, 100.0), 1.03)
        self.assertTrue(holds, lines)

    def test_a_new_split_count_alone_is_a_changed_kernel(self):
        old = table(row(256, 100.0, splits=2), *(row(256, 100.0, n=n) for n in (1024, 2048)))
        new = table(row(256, 104.0, splits=4), *(row(256, 100.0, n=n) for n in (1024, 2048)))
        lines, holds = decode_table_compare.compare(old, new, 1.03)
        self.assertFalse(holds)
        self.assertIn("rows at M > 64 on a new kernel or split count (1) slower "
                      "than 1.030x: 1", lines)

    def test_the_median_per_m_trips_just_above_its_limit_only(self):
        old = self.prefill(200.0, 100.0)
        lines, holds = decode_table_compare.compare(
            old, self.prefill(204.0, 101.9), 1.03)
        self.assertTrue(holds, lines)
        self.assertIn("median new / old per M > 64 (limit 1.020x): M = 1024 1.019",
                      lines)
        lines, holds = decode_table_compare.compare(
            old, self.prefill(204.0, 102.1), 1.03)
        self.assertFalse(holds)
        self.assertIn("  M = 1024: median 1.021x", lines)

    def test_the_per_m_gate_is_a_median_not_a_mean_or_maximum(self):
        # Ratios 1.10, 1.0, 1.0, 1.0: mean 1.025 and maximum 1.10 would trip.
        lines, holds = decode_table_compare.compare(
            self.prefill(200.0, 100.0), self.prefill(220.0, 100.0), 1.03)
        self.assertTrue(holds, lines)
        self.assertIn("median new / old per M > 64 (limit 1.020x): M = 1024 1.000",
                      lines)

    # Three specs x four layers at M = 1024; `slow` maps (spec, n) to a
    # new / old ratio, `kernel_of` (spec, n) to a tile text.
    def three_specs(self, slow=None, kernel_of=None):
        slow, kernel_of = slow or {}, kernel_of or {}
        specs = (SPEC, SPEC.replace("act=fp16", "act=bf16"), SPEC.replace("uint4", "uint8"))
        old = table(*(row(1024, 100.0, n=n, spec=spec,
                          kernel=kernel_of.get((spec, n), "tile=a"))
                      for spec in specs for n in (1024, 2048, 4096, 8192)))
        new = table(*(row(1024, 100.0 * slow.get((spec, n), 1.0), n=n, spec=spec,
                          kernel=kernel_of.get((spec, n), "tile=a"))
                      for spec in specs for n in (1024, 2048, 4096, 8192)))
        return specs, old, new

    def test_one_spec_slower_trips_its_median_only_past_the_limit(self):
        specs, _, _ = self.three_specs()
        for ratio, trips in ((1.029, False), (1.031, True)):
            _, old, new = self.three_specs(
                {(specs[2], n): ratio for n in (1024, 2048, 4096, 8192)})
            lines, holds = decode_table_compare.compare(old, new, 1.03)
            self.assertEqual(holds, not trips, lines)
            self.assertTrue(any(line.startswith("median new / old per M > 64") and
                                "M = 1024 1.000" in line for line in lines), lines)
        self.assertIn("  M = 1024, `weight=uint8,group=128,scale=fp16,act=fp16,out=fp16`: "
                      "median 1.031x", lines)

    def test_one_tile_family_slower_trips_its_median_from_three_rows(self):
        specs, _, _ = self.three_specs()
        family = {(spec, 1024): "tile=b" for spec in specs}
        slow = {(spec, 1024): 1.06 for spec in specs}
        lines, holds = decode_table_compare.compare(
            *self.three_specs(slow, family)[1:], 1.03)
        self.assertFalse(holds)
        self.assertIn("  M = 1024, tile=b: median 1.060x", lines)
        # Two rows of a tile are no family: one run's spread.
        two = {key: value for key, value in family.items() if key[0] != specs[2]}
        lines, holds = decode_table_compare.compare(
            *self.three_specs({key: 1.06 for key in two}, two)[1:], 1.03)
        self.assertTrue(holds, lines)

    def test_an_unchanged_kernel_trips_beyond_the_spread_only(self):
        old = self.prefill(200.0, 100.0)
        lines, holds = decode_table_compare.compare(
            old, self.prefill(223.8, 100.0), 1.03)
        self.assertTrue(holds, lines)
        lines, holds = decode_table_compare.compare(
            old, self.prefill(224.2, 100.0), 1.03)
        self.assertFalse(holds)
        self.assertIn("rows at M > 64 on unchanged kernels (4) slower than 1.120x: 1",
                      lines)

    def test_decode_slowdowns_do_not_trip_the_gate(self):
        old = table(row(8, 10.0, target=10.4, meets=True), row(256, 50.0))
        new = table(row(8, 12.0, target=10.4, meets=False), row(256, 50.0))
        lines, holds = decode_table_compare.compare(old, new, 1.03)
        self.assertTrue(holds)
        self.assertIn("targets met at M <= 64: 0 of 1 "
                      "(old times against the same targets: 1)", lines)
        self.assertTrue(any(line.startswith("  lost: uint4 fp16 8192x8192 M = 8")
                            for line in lines), lines)
        self.assertIn("new / old, M <= 8: 1.200-1.200x (median 1.200, 1 rows)", lines)

    def test_a_flip_to_met_is_named(self):
        old = table(row(16, 11.0, target=10.5, meets=False))
        new = table(row(16, 10.4, target=10.5, meets=True))
        lines, _ = decode_table_compare.compare(old, new, 1.03)
        self.assertIn("  met: uint4 fp16 8192x8192 M = 16: 11.00 -> 10.40 us, "
                      "target 10.50", lines)

    # An old bench on the same GPU may have taken other ceilings (a table
    # before gpu_ceilings.h, on an H100, used the H200's): its verdicts do
    # not count, its times against the new targets do.
    def test_old_times_are_judged_against_the_new_targets(self):
        old = table(row(16, 10.55, target=11.0, meets=True))
        new = table(row(16, 10.4, target=10.5, meets=True))
        lines, _ = decode_table_compare.compare(old, new, 1.03)
        self.assertIn("targets met at M <= 64: 1 of 1 "
                      "(old times against the same targets: 0)", lines)
        self.assertIn("  met: uint4 fp16 8192x8192 M = 16: 10.55 -> 10.40 us, "
                      "target 10.50", lines)

    def test_cases_in_one_table_only_fail_the_comparison(self):
        old = table(row(1, 10.0), row(4096, 700.0))
        new = table(row(1, 10.0), row(4096, 700.0, n=4096))
        lines, holds = decode_table_compare.compare(old, new, 1.03)
        self.assertFalse(holds)
        self.assertIn("only in the old table: uint4 fp16 8192x8192 M = 4096", lines)
        self.assertIn("only in the new table: uint4 fp16 4096x8192 M = 4096", lines)

    def test_a_numerics_failure_fails_the_comparison(self):
        old = table(row(2, 10.0))
        lines, holds = decode_table_compare.compare(
            old, table(row(2, 10.0, numerics_ok=False)), 1.03)
        self.assertFalse(holds)
        self.assertIn("numerics failures in the new table: 1", lines)

    def test_every_m_falls_in_a_group(self):
        ms = (1, 9, 15, 33, 57, 64, 65)
        old = table(*(row(m, 10.0) for m in ms))
        new = table(*(row(m, 11.0) for m in ms))
        lines, _ = decode_table_compare.compare(old, new, 1.03)
        counted = sum(int(line.split(", ")[-1].split(" rows")[0])
                      for line in lines
                      if line.startswith("new / old, M") and "rows)" in line)
        self.assertEqual(counted, len(ms), lines)

    def test_cublas_normalized_median_divides_the_two_ratios(self):
        old = table(row(1024, 200.0, cublas=100.0), row(4096, 800.0, cublas=400.0),
                    row(8192, 1600.0, cublas=800.0))
        new = table(row(1024, 210.0, cublas=105.0), row(4096, 820.0, cublas=400.0),
                    row(8192, 1600.0, cublas=880.0))
        lines, _ = decode_table_compare.compare(old, new, 1.03)
        # 1.05 / 1.05 = 1.000, 1.025 / 1.0 = 1.025, 1.0 / 1.1 = 0.909.
        self.assertIn("new / old at M > 64 over the rows' cuBLAS new / old: "
                      "median 1.000", lines)


class MainTest(unittest.TestCase):

    def write(self, folder, name, rows):
        path = os.path.join(folder, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(rows, f)
        return path

    def run_main(self, *args):
        """(exit status, stdout); stderr stays in self.errors."""
        out, self.errors = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(self.errors):
            code = decode_table_compare.main(list(args))
        return code, out.getvalue()

    def test_exit_status_follows_the_gate(self):
        with tempfile.TemporaryDirectory() as folder:
            old = self.write(folder, "old.json", [row(1024, 200.0)])
            fast = self.write(folder, "fast.json", [row(1024, 190.0)])
            slow = self.write(folder, "slow.json", [row(1024, 220.0)])
            self.assertEqual(self.run_main(old, fast)[0], 0)
            self.assertEqual(self.run_main(old, slow)[0], 1)
            # 1.1x on an unchanged kernel trips the per-M median and the
            # spec / kernel medians, each at its own limit.
            loose = ["--max-median-slowdown", "1.2", "--max-group-median-slowdown", "1.2"]
            self.assertEqual(self.run_main(old, slow, *loose)[0], 0)
            self.assertEqual(self.run_main(old, slow, *loose[:2])[0], 1)
            self.assertEqual(self.run_main(old, slow, *loose[2:])[0], 1)
            self.assertEqual(self.run_main(old, slow, *loose, "--max-spread", "1.05")[0], 1)
            # A changed kernel at 1.1x: --max-slowdown decides.
            changed = self.write(folder, "changed.json",
                                 [row(1024, 220.0, kernel="tile=64x128x128")])
            self.assertEqual(self.run_main(old, changed, *loose)[0], 1)
            self.assertEqual(self.run_main(old, changed, *loose, "--max-slowdown", "1.2")[0], 0)

    def test_tables_of_two_gpus_are_refused(self):
        h100 = "NVIDIA H100 80GB HBM3"
        with tempfile.TemporaryDirectory() as folder:
            unnamed = self.write(folder, "unnamed.json", [row(1024, 200.0)])
            h200 = self.write(folder, "h200.json", [row(1024, 200.0, gpu="NVIDIA H200")])
            on_h100 = self.write(folder, "h100.json", [row(1024, 200.0, gpu=h100)])
            mixed = self.write(folder, "mixed.json", [row(1024, 200.0, gpu=h100),
                                                      row(4096, 800.0, gpu="NVIDIA H200")])
            # A table that names no GPU ran on the H200.
            code, out = self.run_main(unnamed, h200)
            self.assertEqual(code, 0)
            self.assertTrue(out.startswith("GPU: NVIDIA H200\n"), out)
            self.assertEqual(self.run_main(unnamed, on_h100)[0], 2)
            self.assertEqual(self.run_main(h200, on_h100)[0], 2)
            self.assertIn(f"the old table ran on NVIDIA H200, the new one on {h100}: "
                          "times of two GPUs do not compare", self.errors.getvalue())
            code, out = self.run_main(on_h100, on_h100)
            self.assertEqual(code, 0)
            self.assertTrue(out.startswith(f"GPU: {h100}\n"), out)
            self.assertEqual(self.run_main(on_h100, mixed)[0], 2)
            self.assertIn("rows of several GPUs", self.errors.getvalue())

    def test_unreadable_or_duplicated_input_is_exit_two(self):
        with tempfile.TemporaryDirectory() as folder:
            old = self.write(folder, "old.json", [row(1, 10.0)])
            truncated = os.path.join(folder, "truncated.json")
            with open(truncated, "w", encoding="utf-8") as f:
                f.write('[{"spec": "weight=uint4", "n": 81')
            twice = self.write(folder, "twice.json", [row(1, 10.0), row(1, 11.0)])
            no_time = self.write(folder, "no_time.json", [row(1, None)])
            no_kernel = self.write(folder, "no_kernel.json", [row(1, 10.0, kernel=None)])
            no_splits = self.write(folder, "no_splits.json", [row(1, 10.0, splits="4")])
            zero_time = self.write(folder, "zero_time.json", [row(1, 0.0)])
            self.assertEqual(self.run_main(old, truncated)[0], 2)
            self.assertEqual(self.run_main(old, no_time)[0], 2)
            self.assertEqual(self.run_main(old, no_kernel)[0], 2)
            self.assertEqual(self.run_main(no_splits, old)[0], 2)
            self.assertEqual(self.run_main(zero_time, old)[0], 2)
            self.assertEqual(self.run_main(old, twice)[0], 2)
            self.assertEqual(self.run_main(old, os.path.join(folder, "none"))[0], 2)


if __name__ == "__main__":
    unittest.main()
