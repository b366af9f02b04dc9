"""Rows of scripts/ab_sweep.sh: the two builds' sweep.json side by side.

  ab_sweep_rows.py NEW_JSON OLD_JSON OUT_JSON

One row per case either build timed (file line, spec, N×K, M): both times,
new / old, both tiles when they differ, and each build's numerics.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tile_sweep_rows import number, tile_label, weight_and_act  # noqa: E402


def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return []


def key(row):
    return (row.get("line"), row.get("spec"), row.get("n"), row.get("k"),
            row.get("m"))


def numerics(row):
    if not row:
        return "missing"
    return "ok" if row.get("numerics_ok") else "NUMERICS-FAIL"


def main(new_path, old_path, out_path):
    new_rows, old_rows = load(new_path), load(old_path)
    new_by_key = {key(r): r for r in new_rows}
    old_by_key = {key(r): r for r in old_rows}
    keys = sorted(set(new_by_key) | set(old_by_key),
                  key=lambda k: tuple(str(x) for x in k))
    ratios = []
    for k in keys:
        r, o = new_by_key.get(k, {}), old_by_key.get(k, {})
        new_us, old_us = r.get("us"), o.get("us")
        ratio = new_us / old_us if new_us and old_us else None
        if ratio is not None:
            ratios.append(ratio)
        weight, act = weight_and_act(k[1])
        tiles = tile_label(r or o)
        if r and o and tile_label(r) != tile_label(o):
            tiles = f"new {tile_label(r)} / old {tile_label(o)}"
        print(f"{k[0]:>3} {weight:6} {act:5} {k[2]}x{k[3]:<6} M={k[4]:<3}"
              f" new {number(new_us, '7.2f')} old {number(old_us, '7.2f')} us"
              f"  {number(ratio, '5.3f')}x  {tiles}"
              f"  new {numerics(r)}, old {numerics(o)}")
    if ratios:
        print(f"new / old over {len(ratios)} rows: {min(ratios):.3f}-"
              f"{max(ratios):.3f} (median {statistics.median(ratios):.3f})")
    with open(out_path, "w") as f:
        json.dump({"new": new_rows, "old": old_rows}, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
