"""Rows of scripts/tile_sweep.sh.

  tile_sweep_rows.py JSON LINE        one compact text row per bench row
  tile_sweep_rows.py --merge DIR OUT  every line-N.json of DIR into OUT
"""
import glob
import json
import os
import sys


def print_rows(path, line):
    try:
        rows = json.load(open(path))
    except (OSError, ValueError) as error:  # the bench failed before writing
        print(f"line {line}: no rows ({error})")
        return
    for r in rows:
        weight = r["spec"].split(",")[0].split("=")[1]
        act = r["spec"].split("act=")[1].split(",")[0]
        tile = r["kernel"].replace("tile=", "").replace(",mma=wgmma", "")
        ok = "ok" if r["numerics_ok"] else "NUMERICS-FAIL"
        print(f"{line:>3} {weight:6} {act:5} {r['n']}x{r['k']:<6} M={r['m']:<3}"
              f" {r['us']:7.2f} us {100 * r['fraction']:5.1f}%  {tile}"
              f" sp={r['splits']} {ok}")


def merge(folder, out):
    rows = []
    for path in glob.glob(os.path.join(folder, "line-*.json")):
        line = int(os.path.basename(path)[len("line-"):-len(".json")])
        try:
            rows += [dict(row, line=line) for row in json.load(open(path))]
        except (OSError, ValueError):
            pass
    rows.sort(key=lambda r: (r["line"], r["m"]))
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    if sys.argv[1] == "--merge":
        merge(sys.argv[2], sys.argv[3])
    else:
        print_rows(sys.argv[1], int(sys.argv[2]))
