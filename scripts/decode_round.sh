#!/usr/bin/env bash
# Issue 5's whole GPU round in one device call (about 5 minutes on an H200):
# the GPU suite and the daemon round (scripts/gpu_round.sh), then the decode
# benchmark table (scripts/gemm_bench_round.sh) for the six layers of the
# issue at M = 1..64 with W4A16 fp16 / bf16 and W8A16 uint8 / e4m3. Takes the
# carry folder scripts/pack_gpu_round.sh made. Results under $OUT (or
# ./decode-round-out): round/ (gpu_test.json, summary.txt, ...) and bench/
# (gemm_bench.md, gemm_bench.json, cublas.txt). SHAPES, MS and SPECS
# override the defaults; extra arguments go to hummingd_gemm_bench (e.g.
# --override, see bench/README.md).
#
#   scripts/decode_round.sh [CARRY] [extra hummingd_gemm_bench flags]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry=${1:-./.device-carry}
shift || true
out=${OUT:-./decode-round-out}
mkdir -p "$out"

OUT="$out/round" "$here/gpu_round.sh" "$carry" > "$out/round.txt" 2>&1
round_rc=$?
echo "== gpu round (exit $round_rc)"
grep -A1 "== summary" "$out/round.txt" | tail -1
grep -E "^(PASS|FAIL)" "$out/round.txt"

export SHAPES=${SHAPES:-8192x8192,28672x8192,8192x28672,4096x4096,6144x4096,4096x14336}
export MS=${MS:-1,2,4,8,16,32,64}
export SPECS=${SPECS:-"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16;weight=uint4,group=128,scale=bf16,act=bf16,out=bf16;weight=uint8,group=128,scale=fp16,act=fp16,out=fp16;weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16"}
OUT="$out/bench" "$here/gemm_bench_round.sh" "$carry" "$@" \
  > "$out/bench.txt" 2>&1
bench_rc=$?
echo "== decode bench (exit $bench_rc)"
grep "cases," "$out/bench.txt"
# spec, N×K, M, µs, % of roofline, meets
grep '^| `' "$out/bench/gemm_bench.md" 2>/dev/null |
  awk -F'|' '{print $2, $3, $4, $5, $7, $9}'
if [[ $round_rc -ne 0 ]]; then exit "$round_rc"; fi
exit "$bench_rc"
