#!/usr/bin/env bash
# Times candidate tile configs of the decode GEMMs on a GPU machine, many in
# one device call: every line of SWEEP_FILE runs hummingd_gemm_bench once on
# one spec and layer with its --override (empty: the plan itself, the
# baseline of the same run), and the results come back as one compact table
# (line, spec, N×K, M, µs, % of roofline, tile, splits, numerics). Takes the
# carry folder scripts/pack_gpu_round.sh made. Output in $OUT (or
# ./tile-sweep-out): sweep.txt and sweep.json (every row, with its line
# number). Per-line logs stay in a temporary folder (the device tool returns
# only a few files per call); a failed line's last words go to sweep.txt.
#
#   scripts/tile_sweep.sh CARRY SWEEP_FILE
#
# SWEEP_FILE lines (blank lines and # comments skipped):
#   SPEC|NxK|MS|OVERRIDE
# e.g.
#   weight=uint4,group=128,scale=fp16,act=fp16,out=fp16|8192x8192|1,16|
#   weight=uint4,group=128,scale=fp16,act=fp16,out=fp16|8192x8192|16|16:tile=16x256x128,warps=1x8,stages=4,mma=wgmma:8
set -uo pipefail
carry=$(cd "${1:?carry folder}" && pwd) || exit 1
sweep=${2:?sweep file}
out=${OUT:-./tile-sweep-out}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH="$carry/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

line_no=0
while IFS='|' read -r spec shape ms override; do
  [[ -z "${spec// /}" || "$spec" == \#* ]] && continue
  line_no=$((line_no + 1))
  json="$work/line-$line_no.json"
  args=(--specs "$spec" --shapes "$shape" --ms "$ms" --json "$json")
  [[ -n "$override" ]] && args+=(--override "$override")
  if ! "$carry/bin/hummingd_gemm_bench" "${args[@]}" > "$work/line-$line_no.log" 2>&1; then
    echo "line $line_no failed: $(tail -2 "$work/line-$line_no.log" | tr '\n' ' ')" >> "$out/sweep.txt"
  fi
  python3 "$(dirname "$0")/tile_sweep_rows.py" "$json" "$line_no" >> "$out/sweep.txt"
done < "$sweep"
python3 "$(dirname "$0")/tile_sweep_rows.py" --merge "$work" "$out/sweep.json"
cat "$out/sweep.txt"
