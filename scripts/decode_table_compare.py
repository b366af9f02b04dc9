#!/usr/bin/env python3
"""Compares two decode tables (hummingd_gemm_bench JSON, bench/results/).

Issue 5 asks two things of every new table: how many of its M <= 64 targets
it meets, and that no case at M > 64 runs more than 3% slower than in the
previous committed table. This prints both, and how the times moved:

  targets met at M <= 64, new against old, and the rows that flipped;
  new / old time per M group (<= 8, 9-32, 33-64, > 64): range and median;
  at M > 64 the same ratio normalized by the rows' own cuBLAS times (a
  machine that ran slower that day moves both);
  the M > 64 gates below, and every row or M that trips them;
  numerics failures in the new table.

The M > 64 gates. One table is one run, and one run of an unchanged kernel
at M > 64 lands anywhere within about +-8% of another (two tables of one
build, minutes apart on one H200: 0.906-1.076x per row, with every per-M
median within 1.000 +- 0.002, every spec's per-M median within 1.017 and
every tile family's within 1.000; bench/decode-notes.md v83), so a per-row
3% limit on every row fails identical code at random. Hence:
  - a row whose kernel or split count changed runs at most --max-slowdown
    (default 1.03) times its old time: the planner moved that case;
  - per M above 64 (each M's rows: every spec and layer), the median
    new / old is at most --max-median-slowdown (default 1.02);
  - per M and spec (the layers' rows), and per M and kernel (the rows of
    one tile family, where at least three share it), the median is at most
    --max-group-median-slowdown (default 1.03): a change of device code
    moves a tile family's or a format's kernels together (v80 moved the
    families' medians by 0.95-0.99x), which one M's median over all rows
    could hide;
  - any other row runs at most --max-spread (default 1.12) times its old
    time: beyond one run's spread.

Both tables must come from one GPU: times of an H100 and an H200 differ by
their memory bandwidth, not by the code. A row names its GPU (the bench's
"gpu" key); a table written before the bench named it ran on the device
tool's H200 (an old build's bench timed beside a new one on another GPU is
restated on that GPU first: scripts/old_table_restate.py). Targets:
the old times are judged against the new table's targets (the same cases on
the same GPU; an old bench may have used other ceilings).

Exit status 1 when a gate trips, when the new table has a numerics failure,
or when the tables do not hold the same cases; 2 on unreadable input or
tables of different GPUs.

  scripts/decode_table_compare.py OLD.json NEW.json [--max-slowdown 1.03]
      [--max-median-slowdown 1.02] [--max-group-median-slowdown 1.03]
      [--max-spread 1.12]
"""

import argparse
import json
import statistics
import sys

DECODE_MAX_M = 64
# Every table committed before the bench named its GPU ran on the device
# tool's H200 (bench/results/, sessions up to 55).
UNNAMED_GPU = "NVIDIA H200"
# Contiguous, so that every M of a table (sweeps time 9, 15, 33, 57 ...) falls
# in one group.
M_GROUPS = (("M <= 8", lambda m: m <= 8), ("M = 9-32", lambda m: 8 < m <= 32),
            ("M = 33-64", lambda m: 32 < m <= DECODE_MAX_M),
            ("M > 64", lambda m: m > DECODE_MAX_M))


def case_key(row):
    return (row["spec"], row["n"], row["k"], row["m"])


def short_case(row):
    spec = row["spec"]
    weight = spec.split(",")[0].removeprefix("weight=")
    act = next((part.removeprefix("act=") for part in spec.split(",")
                if part.startswith("act=")), "?")
    return f"{weight} {act} {row['n']}x{row['k']} M = {row['m']}"


def load_rows(path):
    """{case: row} of a table, and the GPU its rows ran on (rows that name
    none ran on UNNAMED_GPU). ValueError for a table of several GPUs."""
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    if not isinstance(rows, list):
        raise ValueError(f"{path}: not a JSON array of rows")
    table = {}
    gpus = set()
    for row in rows:
        gpus.add(row.get("gpu") or UNNAMED_GPU)
        key = case_key(row)
        us = row.get("us")
        # The bench writes null for a time that is not finite.
        if isinstance(us, bool) or not isinstance(us, (int, float)) or us <= 0:
            raise ValueError(f"{path}: case {short_case(row)} has no positive time "
                             f"(us = {us!r})")
        # The M > 64 gates tell changed kernels from unchanged ones by these.
        if not isinstance(row.get("kernel"), str) or isinstance(row.get("splits"), bool) \
                or not isinstance(row.get("splits"), int):
            raise ValueError(f"{path}: case {short_case(row)} has no kernel text and "
                             f"split count (kernel = {row.get('kernel')!r}, "
                             f"splits = {row.get('splits')!r})")
        if key in table:
            raise ValueError(f"{path}: case {short_case(row)} appears twice")
        table[key] = row
    if len(gpus) > 1:
        raise ValueError(f"{path}: rows of several GPUs ({', '.join(sorted(gpus))})")
    return table, (gpus.pop() if gpus else UNNAMED_GPU)


def ratio_line(ratios):
    if not ratios:
        return "no rows"
    ordered = sorted(ratios)
    return (f"{ordered[0]:.3f}-{ordered[-1]:.3f}x "
            f"(median {statistics.median(ordered):.3f}, {len(ordered)} rows)")


def same_kernel(old_row, new_row):
    return (old_row.get("kernel"), old_row.get("splits")) == (
        new_row.get("kernel"), new_row.get("splits"))


def compare(old, new, max_slowdown, max_median_slowdown=1.02, max_spread=1.12,
            max_group_median_slowdown=1.03):
    """Returns (report lines, whether every gate holds)."""
    lines = []
    gates_hold = True
    missing = sorted(set(old) - set(new))
    extra = sorted(set(new) - set(old))
    if missing or extra:
        gates_hold = False
        for key in missing:
            lines.append(f"only in the old table: {short_case(old[key])}")
        for key in extra:
            lines.append(f"only in the new table: {short_case(new[key])}")
    common = sorted(set(old) & set(new), key=lambda key: key[1:] + key[:1])

    decode = [key for key in common if key[3] <= DECODE_MAX_M]
    with_target = [key for key in decode if new[key].get("target_us") is not None]

    def meets(table, key):
        return table[key]["us"] <= new[key]["target_us"]

    met_new = sum(1 for key in with_target if meets(new, key))
    met_old = sum(1 for key in with_target if meets(old, key))
    lines.append(f"targets met at M <= {DECODE_MAX_M}: {met_new} of {len(with_target)} "
                 f"(old times against the same targets: {met_old})")
    for key in with_target:
        was, now = meets(old, key), meets(new, key)
        if was != now:
            lines.append(f"  {'met' if now else 'lost'}: {short_case(new[key])}: "
                         f"{old[key]['us']:.2f} -> {new[key]['us']:.2f} us, "
                         f"target {new[key]['target_us']:.2f}")

    for name, in_group in M_GROUPS:
        ratios = [new[key]["us"] / old[key]["us"] for key in common if in_group(key[3])]
        lines.append(f"new / old, {name}: {ratio_line(ratios)}")

    prefill = [key for key in common if key[3] > DECODE_MAX_M]
    normalized = [new[key]["us"] / old[key]["us"] /
                  (new[key]["cublas_us"] / old[key]["cublas_us"])
                  for key in prefill
                  if new[key].get("cublas_us") and old[key].get("cublas_us")]
    if normalized:
        lines.append(f"new / old at M > {DECODE_MAX_M} over the rows' cuBLAS new / old: "
                     f"median {statistics.median(normalized):.3f}")

    def slower_rows(keys, limit, what):
        slower = [key for key in keys if new[key]["us"] > limit * old[key]["us"]]
        lines.append(f"rows at M > {DECODE_MAX_M} {what} slower than {limit:.3f}x: "
                     f"{len(slower)}")
        for key in slower:
            lines.append(f"  {short_case(new[key])}: {old[key]['us']:.2f} -> "
                         f"{new[key]['us']:.2f} us ({new[key]['us'] / old[key]['us']:.3f}x)")
        return not slower

    changed = [key for key in prefill if not same_kernel(old[key], new[key])]
    unchanged = [key for key in prefill if same_kernel(old[key], new[key])]
    gates_hold &= slower_rows(
        changed, max_slowdown, f"on a new kernel or split count ({len(changed)})")

    def median_groups(group_of, min_rows):
        """{group: median new / old} over the prefill rows, groups of at
        least min_rows rows."""
        groups = {}
        for key in prefill:
            groups.setdefault(group_of(key), []).append(new[key]["us"] / old[key]["us"])
        return {group: statistics.median(ratios)
                for group, ratios in sorted(groups.items()) if len(ratios) >= min_rows}

    per_m = median_groups(lambda key: key[3], 1)
    if per_m:
        lines.append(f"median new / old per M > {DECODE_MAX_M} (limit "
                     f"{max_median_slowdown:.3f}x): " +
                     ", ".join(f"M = {m} {median:.3f}" for m, median in per_m.items()))
    over = [f"M = {m}: median {median:.3f}x" for m, median in per_m.items()
            if median > max_median_slowdown]
    per_spec = median_groups(lambda key: (key[3], key[0]), 1)
    per_kernel = median_groups(lambda key: (key[3], new[key]["kernel"]), 3)
    worst = max(list(per_spec.values()) + list(per_kernel.values()), default=None)
    if worst is not None:
        lines.append(f"medians per M > {DECODE_MAX_M} and spec ({len(per_spec)}) or kernel "
                     f"({len(per_kernel)} with >= 3 rows; limit "
                     f"{max_group_median_slowdown:.3f}x): highest {worst:.3f}")
    over += [f"M = {m}, `{spec}`: median {median:.3f}x"
             for (m, spec), median in per_spec.items() if median > max_group_median_slowdown]
    over += [f"M = {m}, {kernel}: median {median:.3f}x"
             for (m, kernel), median in per_kernel.items()
             if median > max_group_median_slowdown]
    lines.extend(f"  {line}" for line in over)
    if over:
        gates_hold = False
    gates_hold &= slower_rows(
        unchanged, max_spread, f"on unchanged kernels ({len(unchanged)})")

    failures = [key for key in new if not new[key].get("numerics_ok", False)]
    lines.append(f"numerics failures in the new table: {len(failures)}")
    for key in failures:
        lines.append(f"  {short_case(new[key])}")
    if failures:
        gates_hold = False
    return lines, gates_hold


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--max-slowdown", type=float, default=1.03)
    parser.add_argument("--max-median-slowdown", type=float, default=1.02)
    parser.add_argument("--max-group-median-slowdown", type=float, default=1.03)
    parser.add_argument("--max-spread", type=float, default=1.12)
    args = parser.parse_args(argv)
    try:
        old, old_gpu = load_rows(args.old)
        new, new_gpu = load_rows(args.new)
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"decode_table_compare: {error}", file=sys.stderr)
        return 2
    if old_gpu != new_gpu:
        print(f"decode_table_compare: the old table ran on {old_gpu}, the new one on "
              f"{new_gpu}: times of two GPUs do not compare; time the old build on "
              f"the new table's GPU (scripts/decode_round.sh with OLD_BENCH)",
              file=sys.stderr)
        return 2
    print(f"GPU: {new_gpu}")
    lines, gates_hold = compare(old, new, args.max_slowdown,
                                args.max_median_slowdown, args.max_spread,
                                args.max_group_median_slowdown)
    print("\n".join(lines))
    return 0 if gates_hold else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
