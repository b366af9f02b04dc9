#!/usr/bin/env bash
# Times candidate tile configs of the decode GEMMs on a GPU machine, many in
# one device call: every line of SWEEP_FILE runs hummingd_gemm_bench once on
# one spec and layer with its --override (empty: the plan itself, the
# baseline of the same run), and the results come back as one compact table
# (file line, spec, N×K, M, µs, % of roofline, tile, splits, numerics).
# Takes the carry folder scripts/pack_gpu_round.sh made. Output in $OUT (or
# ./tile-sweep-out), replaced on every run: sweep.txt and sweep.json (every
# row, with its file line). Per-line logs stay in a temporary folder (the
# device tool returns only a few files per call); a failed line's last words
# go to sweep.txt, and the script exits 1 when any line failed. The last
# line of sweep.txt is the call's wall time and the bench's host phases
# (resolve, inputs, layers, measure) summed over the lines that ran.
# BENCH_CACHE_DIR: the bench's kernel cache (default: the bench's own), so
# that two builds never share plans or cubins (scripts/ab_sweep.sh).
# LINE_TIMEOUT_S: seconds one line may run (default 180), so that a kernel
# that never finishes (an experiment's spin-wait) costs one line, not the
# whole device call.
#
#   scripts/tile_sweep.sh CARRY SWEEP_FILE
#
# SWEEP_FILE lines (blank lines and # comments skipped; CRLF accepted):
#   SPEC|NxK|MS|OVERRIDE
# e.g.
#   weight=uint4,group=128,scale=fp16,act=fp16,out=fp16|8192x8192|1,16|
#   weight=uint4,group=128,scale=fp16,act=fp16,out=fp16|8192x8192|16|16:tile=16x256x128,warps=1x8,stages=4,mma=wgmma:8
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry=$(cd "${1:?carry folder}" && pwd) || exit 1
sweep=${2:?sweep file}
[[ -r "$sweep" ]] || { echo "tile_sweep: cannot read sweep file '$sweep'" >&2; exit 1; }
out=${OUT:-./tile-sweep-out}
mkdir -p "$out"
rm -f "$out/sweep.txt" "$out/sweep.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH="$carry/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

failed=0
file_line=0
lines_run=0
sweep_start=$SECONDS
line_timeout=${LINE_TIMEOUT_S:-180}
# `|| [[ -n $text ]]`: a last line without a newline still runs.
while IFS= read -r text || [[ -n "$text" ]]; do
  file_line=$((file_line + 1))
  text=${text%$'\r'}
  trimmed=${text#"${text%%[![:space:]]*}"}
  [[ -z "$trimmed" || "$trimmed" == \#* ]] && continue
  IFS='|' read -r spec shape ms override <<< "$trimmed"
  json="$work/line-$file_line.json"
  args=(--specs "$spec" --shapes "$shape" --ms "$ms" --json "$json")
  [[ -n "${BENCH_CACHE_DIR:-}" ]] && args+=(--cache_dir "$BENCH_CACHE_DIR")
  [[ -n "$override" ]] && args+=(--override "$override")
  timeout "$line_timeout" "$carry/bin/hummingd_gemm_bench" "${args[@]}" \
    < /dev/null > "$work/line-$file_line.log" 2>&1
  rc=$?
  lines_run=$((lines_run + 1))
  if [[ $rc -eq 124 ]]; then
    failed=1
    echo "line $file_line failed: timed out after ${line_timeout} s (a kernel that never finishes?)" >> "$out/sweep.txt"
  elif [[ $rc -ne 0 ]]; then
    failed=1
    echo "line $file_line failed: $(tail -2 "$work/line-$file_line.log" | tr '\n' ' ')" >> "$out/sweep.txt"
  fi
  python3 "$here/tile_sweep_rows.py" "$json" "$file_line" >> "$out/sweep.txt"
done < "$sweep"
python3 "$here/tile_sweep_rows.py" --merge "$work" "$out/sweep.json"
# Where the call's device time went: the lines' wall time and the bench's
# host phases summed over every layer it ran (gemm_bench.cc prints them).
# Each phase is read by its name ("resolve 0.52 s,"), not its position.
cat "$work"/line-*.log 2>/dev/null |
  awk -v lines="$lines_run" -v wall="$((SECONDS - sweep_start))" '
  /^phases / {
    n++
    for (f = 1; f < NF; f++) {
      if ($f == "resolve") r += $(f + 1)
      if ($f == "inputs") i += $(f + 1)
      if ($f == "layers") l += $(f + 1)
      if ($f == "measure") m += $(f + 1)
    }
  }
  END { printf "phases over %d lines (%d s wall), %d layers: resolve %.1f s, inputs %.1f s, layers %.1f s, measure %.1f s\n", lines, wall, n, r, i, l, m }' \
  >> "$out/sweep.txt"
cat "$out/sweep.txt"
exit "$failed"
