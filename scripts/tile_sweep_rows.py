"""Rows of scripts/tile_sweep.sh.

  tile_sweep_rows.py JSON LINE        one compact text row per bench row
  tile_sweep_rows.py --merge DIR OUT  every line-N.json of DIR into OUT
"""
import glob
import json
import os
import sys


def number(value, fmt):
    """A value the bench may have written as null (non-finite)."""
    return "-" if value is None else format(value, fmt)


def weight_and_act(spec):
    """('uint4', 'fp16') of a spec text."""
    spec = spec or "?"
    weight = spec.split(",")[0].split("=")[-1]
    act = spec.split("act=")[1].split(",")[0] if "act=" in spec else "?"
    return weight, act


def tile_label(row):
    """A row's tile text without the redundant parts, and its split."""
    tile = (row.get("kernel") or "?").replace("tile=", "")
    return f"{tile.replace(',mma=wgmma', '')} sp={row.get('splits')}"


def print_rows(path, line):
    try:
        rows = json.load(open(path))
    except (OSError, ValueError) as error:  # the bench failed before writing
        print(f"line {line}: no rows ({error})")
        return
    for r in rows:
        weight, act = weight_and_act(r.get("spec"))
        fraction = r.get("fraction")
        percent = None if fraction is None else 100 * fraction
        ok = "ok" if r.get("numerics_ok") else "NUMERICS-FAIL"
        print(f"{line:>3} {weight:6} {act:5} {r.get('n')}x{r.get('k'):<6}"
              f" M={r.get('m'):<3} {number(r.get('us'), '7.2f')} us"
              f" {number(percent, '5.1f')}%  {tile_label(r)} {ok}")


def merge(folder, out):
    rows = []
    for path in glob.glob(os.path.join(folder, "line-*.json")):
        line = int(os.path.basename(path)[len("line-"):-len(".json")])
        try:
            rows += [dict(row, line=line) for row in json.load(open(path))]
        except (OSError, ValueError):
            pass
    rows.sort(key=lambda r: (r["line"], r.get("m") or 0))
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    if sys.argv[1] == "--merge":
        merge(sys.argv[2], sys.argv[3])
    else:
        print_rows(sys.argv[1], int(sys.argv[2]))
