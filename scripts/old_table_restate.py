#!/usr/bin/env python3
"""Restates an old build's decode table in the terms of a new table timed on
the same GPU in the same call (scripts/decode_round.sh).

An old build's bench may predate the "gpu" key and the per-GPU ceilings
(bench/kernel/gpu_ceilings.h): on an H100 it named no GPU, and its roofline,
targets and verdicts used the H200's ceilings. Its times are what counts.
This rewrites OLD in place, case by case from NEW: the GPU and the ceilings
(gpu, copy_tbps, tensor_tflops), roofline_us and target_us, and from the old
time fraction and meets; every other key (us, cublas_us, the numerics, kernel,
splits) stays the old build's. One row per line, "kernel" and "splits" last,
as the bench writes them (the readers that match a line's end rely on it).
A case of OLD that NEW lacks is left as it is. Exit 2 on unreadable input.

  scripts/old_table_restate.py OLD.json NEW.json
"""

import json
import sys

# Keys taken from the new table's row of the same case.
FROM_NEW = ("roofline_us", "target_us", "gpu", "copy_tbps", "tensor_tflops")


def case_key(row):
    return (row["spec"], row["n"], row["k"], row["m"])


def restate(old_rows, new_rows):
    """The old rows with the new rows' GPU, ceilings and targets."""
    new_by_case = {case_key(row): row for row in new_rows}
    restated = []
    for row in old_rows:
        new = new_by_case.get(case_key(row))
        if new is None:
            restated.append(row)
            continue
        values = dict(row)
        values.update({key: new.get(key) for key in FROM_NEW})
        us, roofline, target = values["us"], values["roofline_us"], values["target_us"]
        values["fraction"] = round(roofline / us, 4) if us and roofline else None
        values["meets"] = None if target is None else us <= target
        tail = {key: values.pop(key) for key in ("kernel", "splits") if key in values}
        values.update(tail)
        restated.append(values)
    return restated


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    old_path, new_path = argv
    try:
        with open(old_path, encoding="utf-8") as f:
            old_rows = json.load(f)
        with open(new_path, encoding="utf-8") as f:
            new_rows = json.load(f)
        rows = restate(old_rows, new_rows)
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"old_table_restate: {error}", file=sys.stderr)
        return 2
    with open(old_path, "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join("  " + json.dumps(row) for row in rows) + "\n]\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
