#!/usr/bin/env bash
# On the GPU machine: an A/B of a patch's bench (new; packed into
# CARRY/patch/ by `PATCH_BENCH=... PATCH_NAME=... scripts/pack_gpu_round.sh`)
# against the carry's own bench (old: main's) on SWEEP_FILE, both on the
# carry's libraries, through scripts/ab_sweep.sh. The device tool carries
# no links, so the A/B's carry is assembled here in a temporary folder.
# Output as ab_sweep.sh's ($OUT or ./ab-sweep-out).
#
#   scripts/patch_ab.sh CARRY SWEEP_FILE
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry=$(cd "${1:?carry folder}" && pwd) || exit 1
sweep=${2:?sweep file}
[[ -x "$carry/patch/bin/hummingd_gemm_bench" ]] || {
  echo "patch_ab: no $carry/patch/bin/hummingd_gemm_bench (pack with PATCH_BENCH=...)" >&2
  exit 1
}
[[ -x "$carry/bin/hummingd_gemm_bench" ]] || {
  echo "patch_ab: no $carry/bin/hummingd_gemm_bench (build the bench before packing)" >&2
  exit 1
}
ab=$(mktemp -d)
trap 'rm -rf "$ab"' EXIT
mkdir -p "$ab/bin" "$ab/old/bin"
ln -s "$carry/lib" "$ab/lib"
ln -s "$carry/patch/bin/hummingd_gemm_bench" "$ab/bin/hummingd_gemm_bench"
ln -s "$carry/bin/hummingd_gemm_bench" "$ab/old/bin/hummingd_gemm_bench"
echo "$(cat "$carry/COMMIT" 2>/dev/null || echo ?)+$(cat "$carry/patch/NAME" 2>/dev/null || echo patch)" > "$ab/COMMIT"
cp "$carry/COMMIT" "$ab/old/COMMIT" 2>/dev/null || echo ? > "$ab/old/COMMIT"
"$here/ab_sweep.sh" "$ab" "$sweep"
