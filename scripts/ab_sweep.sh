#!/usr/bin/env bash
# Times two builds' kernels on the same tiles in one device call: runs
# scripts/tile_sweep.sh with SWEEP_FILE once with the carry's own
# hummingd_gemm_bench ("new") and once with CARRY/old/bin/hummingd_gemm_bench
# ("old", put there by `OLD_BENCH=... scripts/pack_gpu_round.sh`), both on
# the carry's shared libraries, and prints one row per case: new µs, old µs,
# new / old. Use overrides in the sweep file so that both builds time the
# same tile and split (their planners may differ).
# Output in $OUT (or ./ab-sweep-out), replaced on every run: ab.txt (what
# this prints) and ab.json (both builds' rows). Exits 1 when a line failed in
# either build.
#
#   scripts/ab_sweep.sh CARRY SWEEP_FILE
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry=$(cd "${1:?carry folder}" && pwd) || exit 1
sweep=${2:?sweep file}
[[ -r "$sweep" ]] || { echo "ab_sweep: cannot read sweep file '$sweep'" >&2; exit 1; }
[[ -x "$carry/old/bin/hummingd_gemm_bench" ]] || {
  echo "ab_sweep: no $carry/old/bin/hummingd_gemm_bench (pack with OLD_BENCH=...)" >&2
  exit 1
}
out=${OUT:-./ab-sweep-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/ab.txt" "$out/ab.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The old bench runs on the carry's libraries (the device tool may not keep
# links, so the link is made here).
ln -sfn ../lib "$carry/old/lib"

# Each build keeps its own kernel cache: the two may share plan and artifact
# keys for kernels that differ. New runs first, then old (same order every
# time; repeat the call to see the order's effect).
OUT="$work/new" BENCH_CACHE_DIR="$work/new-cache" "$here/tile_sweep.sh" \
  "$carry" "$sweep" > "$work/new.txt" 2>&1
new_rc=$?
OUT="$work/old" BENCH_CACHE_DIR="$work/old-cache" "$here/tile_sweep.sh" \
  "$carry/old" "$sweep" > "$work/old.txt" 2>&1
old_rc=$?
python3 "$here/ab_sweep_rows.py" "$work/new/sweep.json" "$work/old/sweep.json" \
  "$out/ab.json" > "$out/ab.txt"
grep -E '^(line|phases) ' "$work/new.txt" | sed 's/^/new: /' >> "$out/ab.txt"
grep -E '^(line|phases) ' "$work/old.txt" | sed 's/^/old: /' >> "$out/ab.txt"
echo "new build: $(cat "$carry/COMMIT" 2>/dev/null || echo ?) (exit $new_rc); old: $(cat "$carry/old/COMMIT" 2>/dev/null || echo ?) (exit $old_rc)" >> "$out/ab.txt"
# Times of two GPUs never compare (bench/README.md, "Which GPU").
echo "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)" >> "$out/ab.txt"
cat "$out/ab.txt"
[[ $new_rc -eq 0 && $old_rc -eq 0 ]]
