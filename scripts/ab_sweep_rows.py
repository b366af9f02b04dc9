"""Rows of scripts/ab_sweep.sh: the two builds' sweep.json side by side.

  ab_sweep_rows.py NEW_JSON OLD_JSON OUT_JSON
"""
import json
import sys


def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return []


def key(row):
    return (row.get("line"), row.get("spec"), row.get("n"), row.get("k"),
            row.get("m"))


def main(new_path, old_path, out_path):
    new_rows, old_rows = load(new_path), load(old_path)
    old_by_key = {key(r): r for r in old_rows}
    ratios = []
    for r in new_rows:
        o = old_by_key.get(key(r), {})
        new_us, old_us = r.get("us"), o.get("us")
        ratio = new_us / old_us if new_us and old_us else None
        if ratio is not None:
            ratios.append(ratio)
        spec = r.get("spec") or "?"
        weight = spec.split(",")[0].split("=")[-1]
        act = spec.split("act=")[1].split(",")[0] if "act=" in spec else "?"
        tile = (r.get("kernel") or "?").replace("tile=", "")
        tile = tile.replace(",mma=wgmma", "")
        ok = "ok" if r.get("numerics_ok") and o.get("numerics_ok") else "NUMERICS-FAIL"
        fmt = lambda v, f: "-" if v is None else format(v, f)
        print(f"{r.get('line'):>3} {weight:6} {act:5} {r.get('n')}x{r.get('k'):<6}"
              f" M={r.get('m'):<3} new {fmt(new_us, '7.2f')} old"
              f" {fmt(old_us, '7.2f')} us  {fmt(ratio, '5.3f')}x  {tile}"
              f" sp={r.get('splits')} {ok}")
    if ratios:
        ratios.sort()
        median = ratios[len(ratios) // 2]
        print(f"new / old over {len(ratios)} rows: {ratios[0]:.3f}-{ratios[-1]:.3f}"
              f" (median {median:.3f})")
    with open(out_path, "w") as f:
        json.dump({"new": new_rows, "old": old_rows}, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
