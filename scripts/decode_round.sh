#!/usr/bin/env bash
# Issue 5's whole GPU round in one device call (about 5 minutes on an H200):
# the GPU suite and the daemon round (scripts/gpu_round.sh), then the decode
# benchmark table (scripts/gemm_bench_round.sh) for the six layers of the
# issue at M = 1..64 with W4A16 fp16 / bf16 and W8A16 uint8 / e4m3, then the
# group-size table the issue asks to report (uint4 group 32 / 64 /
# channel-wise on 8192², and group 128 with integer zero points, the GPTQ /
# AWQ layout; no cuBLAS column). Takes the carry folder
# scripts/pack_gpu_round.sh made.
#
# Results under $OUT (or ./decode-round-out), few files on purpose (the
# device tool returns only about eight per call): summary.txt (what this
# script prints), bench/gemm_bench.{md,json}, groups/gemm_bench.{md,json},
# bench-old/gemm_bench.json (below), and logs.tar.gz with everything else
# (the suite's JSON and log, the daemon round, cuBLAS times). SHAPES, MS and SPECS override the decode table's
# cases; GROUP_SPECS / GROUP_SHAPES the group table's (GROUP_SPECS=none
# skips it); extra arguments go to hummingd_gemm_bench (e.g. --override,
# see bench/README.md).
#
# With an old build's bench in the carry (pack with OLD_BENCH=, as for
# scripts/ab_sweep.sh) it times the same decode cases on that build too,
# right after the new one on the same GPU (without the extra flags), into
# bench-old/gemm_bench.json, restated on the new table's GPU, ceilings and
# targets (scripts/old_table_restate.py: an old bench may predate them), and
# prints scripts/decode_table_compare.py's verdict of old against new: the
# baseline issue 5's M > 64 gate needs on a GPU that no committed table ran
# on (the device tool lends H100s and H200s; tables of two GPUs do not
# compare). OLD_TABLE=0 skips it. The group table takes the decode table's
# ceilings.
#
#   scripts/decode_round.sh [CARRY] [extra hummingd_gemm_bench flags]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry=${1:-./.device-carry}
shift || true
out=${OUT:-./decode-round-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/round" "$out/bench" "$out/bench-old" "$out/groups" "$out/logs.tar.gz"

# What this script prints is also summary.txt.
exec > >(tee "$out/summary.txt") 2>&1
tee_pid=$!

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

# The ceilings the decode table took (bench/kernel/gpu_ceilings.h), from its
# first row: the group table below takes the same ones, so that one round's
# targets share their roofline on a GPU with none committed.
ceiling_flags=()
read -r copy_tbps tensor_tflops < <(python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))
print(rows[0].get("copy_tbps") or "", rows[0].get("tensor_tflops") or "")' \
  "$out/bench/gemm_bench.json" 2>/dev/null)
if [[ -n "${copy_tbps:-}" && -n "${tensor_tflops:-}" ]]; then
  ceiling_flags=(--copy_tbps "$copy_tbps" --tensor_tflops "$tensor_tflops")
fi

old_rc=0
compare_rc=0
if [[ -x "$carry/old/bin/hummingd_gemm_bench" && "${OLD_TABLE:-1}" != 0 ]]; then
  carry_dir=$(cd "$carry" && pwd)
  mkdir -p "$out/bench-old"
  # A kernel cache of its own: the two builds may share plan and artifact
  # keys for kernels that differ (as in scripts/ab_sweep.sh). The script's
  # extra flags are the new build's (an --override would time the new
  # build's tiles in the old one; a new flag would stop it).
  old_cache=$(mktemp -d)
  LD_LIBRARY_PATH="$carry_dir/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$carry_dir/old/bin/hummingd_gemm_bench" --specs "$SPECS" --shapes "$SHAPES" \
    --ms "$MS" --cublas_json "$out/bench/cublas.txt" --cache_dir "$old_cache" \
    --json "$out/bench-old/gemm_bench.json" > "$out/bench-old.txt" 2>&1
  old_rc=$?
  rm -rf "$old_cache"
  echo "== the old build's decode table ($(cat "$carry_dir/old/COMMIT" 2>/dev/null), exit $old_rc)"
  grep "cases," "$out/bench-old.txt"
  # The old bench may predate the "gpu" key and the per-GPU ceilings: its
  # rows take the new table's GPU, ceilings and targets (its times stay), so
  # that the pair, committed, compares as it does here.
  python3 "$here/old_table_restate.py" "$out/bench-old/gemm_bench.json" \
    "$out/bench/gemm_bench.json"
  echo "== old against new (scripts/decode_table_compare.py; old rows restated on the new table's GPU, exit $?)"
  python3 "$here/decode_table_compare.py" \
    "$out/bench-old/gemm_bench.json" "$out/bench/gemm_bench.json"
  compare_rc=$?
  echo "== decode_table_compare exit $compare_rc"
fi

group_specs=${GROUP_SPECS:-"weight=uint4,group=32,scale=fp16,act=fp16,out=fp16;weight=uint4,group=64,scale=fp16,act=fp16,out=fp16;weight=uint4,group=channel,scale=fp16,act=fp16,out=fp16;weight=uint4,group=128,scale=fp16,zero=int,act=fp16,out=fp16"}
groups_rc=0
if [[ "$group_specs" != none ]]; then
  mkdir -p "$out/groups"
  carry_dir=$(cd "$carry" && pwd)
  LD_LIBRARY_PATH="$carry_dir/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$carry_dir/bin/hummingd_gemm_bench" --specs "$group_specs" \
    --shapes "${GROUP_SHAPES:-8192x8192}" --ms "$MS" "${ceiling_flags[@]}" \
    --markdown "$out/groups/gemm_bench.md" \
    --json "$out/groups/gemm_bench.json" > "$out/groups.txt" 2>&1
  groups_rc=$?
  echo "== group sizes (exit $groups_rc)"
  grep "cases," "$out/groups.txt"
fi

# Everything but the tables and the summary travels as one archive.
logs=()
for path in round round.txt bench.txt bench-old.txt groups.txt bench/cublas.txt bench/gpu.txt; do
  [[ -e "$out/$path" ]] && logs+=("$path")
done
if [[ ${#logs[@]} -gt 0 ]]; then
  tar -czf "$out/logs.tar.gz" -C "$out" "${logs[@]}" &&
    (cd "$out" && rm -rf "${logs[@]}")
fi

# summary.txt is whole once tee has seen the end of the output.
exec 1>&- 2>&-
wait "$tee_pid"
if [[ $round_rc -ne 0 ]]; then exit "$round_rc"; fi
if [[ $bench_rc -ne 0 ]]; then exit "$bench_rc"; fi
if [[ $old_rc -ne 0 ]]; then exit "$old_rc"; fi
if [[ $groups_rc -ne 0 ]]; then exit "$groups_rc"; fi
exit "$compare_rc"
