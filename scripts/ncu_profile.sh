#!/usr/bin/env bash
# Nsight Compute profiles of decode GEMM kernels on a GPU machine, one device
# call for several cases: each line of CASE_FILE runs hummingd_gemm_bench
# once under ncu (full section set, clocks left alone), profiling one launch
# of the GEMM kernel after the bench's first few, and keeps per case:
#   <name>.txt   the details page (speed of light, memory, scheduler and warp
#                state statistics: issue rate and stall reasons);
#   <name>.csv   the source page as CSV: every SASS instruction with its
#                executed count and its warp-stall samples by reason;
# and all of them packed into profiles.tar.gz (the device tool returns only a
# few files per call; the .ncu-rep reports go in the archive too).
# Takes the carry folder scripts/pack_gpu_round.sh made.
#
#   OUT=... [NCU_SKIP=6] scripts/ncu_profile.sh CARRY CASE_FILE
#
# NCU_SKIP: launches of the kernel skipped before the profiled one.
#
# CASE_FILE lines (blank lines and # comments skipped):
#   NAME|SPEC|NxK|M|OVERRIDE
# OVERRIDE as in scripts/tile_sweep.sh (empty: the plan's own kernel).
set -uo pipefail
carry=$(cd "${1:?carry folder}" && pwd) || exit 1
cases=${2:?case file}
[[ -r "$cases" ]] || { echo "ncu_profile: cannot read '$cases'" >&2; exit 1; }
out=${OUT:-./ncu-profile-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
export LD_LIBRARY_PATH="$carry/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[[ -x "$ncu_bin" ]] || { echo "ncu_profile: no ncu on this machine" >&2; exit 1; }
# The bench checks numerics first and warms up before its graph: skipping a
# few launches of the kernel lands on a timed one.
skip=${NCU_SKIP:-6}
status=0
while IFS='|' read -r name spec shape m override || [[ -n "$name" ]]; do
  name=${name%$'\r'}
  override=${override%$'\r'}
  [[ -z "$name" || "$name" == \#* ]] && continue
  flags=(--specs "$spec" --shapes "$shape" --ms "$m" --replays 2
         --cache_dir "$work/cache")
  [[ -n "$override" ]] && flags+=(--override "$override")
  echo "== $name: $spec $shape M=$m ${override:+override $override}"
  if ! "$ncu_bin" --clock-control none --set full -k regex:hummingd_gemm \
      -s "$skip" -c 1 -f -o "$work/$name" \
      "$carry/bin/hummingd_gemm_bench" "${flags[@]}" > "$work/$name.log" 2>&1; then
    echo "   ncu failed:"; tail -5 "$work/$name.log"; status=1; continue
  fi
  "$ncu_bin" -i "$work/$name.ncu-rep" --page details > "$work/$name.txt" 2>&1
  "$ncu_bin" -i "$work/$name.ncu-rep" --page source --csv \
    --print-source sass > "$work/$name.csv" 2>&1 ||
    echo "   (no source page: $(tail -1 "$work/$name.csv"))"
  grep -E "Duration|Issue Slots Busy|No Eligible|Registers Per Thread|Achieved Occupancy|DRAM Throughput|Warp Cycles Per Issued" \
    "$work/$name.txt" | sed 's/^ */   /'
done < "$cases"
tar czf "$out/profiles.tar.gz" -C "$work" --exclude cache .
rm -rf "$work"
exit $status
