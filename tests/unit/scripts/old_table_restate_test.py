#!/usr/bin/env python3
"""scripts/old_table_restate.py: an old build's rows take the new table's GPU,
ceilings and targets case by case, keep their own times, numerics, kernel
and split count, get fraction and meets from their own time, end each line
with kernel and splits as the bench writes them, and a case the new table
lacks stays as it was; unreadable input is exit 2 and leaves OLD alone."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.environ.get(
    "HUMMINGD_SCRIPTS",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts")))
import old_table_restate  # noqa: E402

SPEC = "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16"
H100 = "NVIDIA H100 80GB HBM3"


def old_row(m, us, roofline, target):
    """A row of a bench before the "gpu" key, with the H200's ceilings."""
    return {"spec": SPEC, "n": 8192, "k": 8192, "m": m, "us": us,
            "roofline_us": roofline, "fraction": roofline / us, "cublas_us": 37.0,
            "target_us": target, "meets": target is not None and us <= target,
            "rel_err": 2e-4, "non_finite": 0, "numerics_ok": True,
            "kernel": "tile=old", "splits": 4}


def new_row(m, us, roofline, target):
    return {"spec": SPEC, "n": 8192, "k": 8192, "m": m, "us": us,
            "roofline_us": roofline, "fraction": roofline / us, "cublas_us": 50.0,
            "target_us": target, "meets": target is not None and us <= target,
            "rel_err": 1e-4, "non_finite": 0, "numerics_ok": True, "gpu": H100,
            "copy_tbps": 3.02, "tensor_tflops": 771.5, "kernel": "tile=new",
            "splits": 1}


class RestateTest(unittest.TestCase):

    def folder(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        return folder.name

    def run_on(self, old_rows, new_rows):
        folder = self.folder()
        old_path, new_path = (os.path.join(folder, name) for name in ("old.json", "new.json"))
        for path, rows in ((old_path, old_rows), (new_path, new_rows)):
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(rows, handle)
        code = old_table_restate.main([old_path, new_path])
        with open(old_path, encoding="utf-8") as handle:
            return code, handle.read()

    def test_old_rows_take_the_new_gpu_ceilings_and_targets(self):
        # On the H100, M = 1: the old bench judged 12.0 us against the
        # H200's 10.4 target (lost); against the H100's 14.5 it meets.
        code, text = self.run_on(
            [old_row(1, 12.0, 8.3, 10.4), old_row(256, 60.0, 42.9, None),
             old_row(2, 12.5, 8.3, 10.4)],
            [new_row(1, 11.0, 11.6, 14.5), new_row(256, 58.0, 59.5, None)])
        self.assertEqual(code, 0)
        lines = text.splitlines()
        self.assertEqual((lines[0], lines[-1]), ("[", "]"))
        self.assertEqual(len(lines), 5)
        rows = json.loads(text)
        first, prefill, unmatched = rows
        self.assertEqual((first["gpu"], first["copy_tbps"], first["tensor_tflops"]),
                         (H100, 3.02, 771.5))
        self.assertEqual((first["roofline_us"], first["target_us"]), (11.6, 14.5))
        self.assertEqual((first["us"], first["cublas_us"], first["rel_err"]),
                         (12.0, 37.0, 2e-4))
        self.assertEqual((first["kernel"], first["splits"]), ("tile=old", 4))
        self.assertTrue(first["meets"])
        self.assertAlmostEqual(first["fraction"], 11.6 / 12.0, places=4)
        self.assertIsNone(prefill["meets"])
        self.assertIsNone(prefill["target_us"])
        # A case the new table lacks keeps the old bench's words.
        self.assertEqual(unmatched, old_row(2, 12.5, 8.3, 10.4))
        # Each row on its line, kernel and splits last (the readers that
        # match a line's end rely on it).
        for line in lines[1:-1]:
            self.assertRegex(line, r'^  \{"spec": .*"kernel": "tile=old", "splits": 4\},?$')

    def test_unreadable_input_is_exit_two_and_old_stays(self):
        folder = self.folder()
        old_path = os.path.join(folder, "old.json")
        with open(old_path, "w", encoding="utf-8") as handle:
            json.dump([old_row(1, 12.0, 8.3, 10.4)], handle)
        with open(old_path, encoding="utf-8") as handle:
            before = handle.read()
        missing = os.path.join(folder, "none.json")
        self.assertEqual(old_table_restate.main([old_path, missing]), 2)
        self.assertEqual(old_table_restate.main([old_path]), 2)
        with open(old_path, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), before)


if __name__ == "__main__":
    unittest.main()
