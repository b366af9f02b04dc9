#!/usr/bin/env bash
# One device call's worth of sweeps on a packed carry: an A/B sweep
# (scripts/ab_sweep.sh) twice, and between the two runs, where given, a tile
# sweep (scripts/tile_sweep.sh) of the carry's own build, all within a time
# budget, so that both A/B runs see the same warm machine and the device
# tool's few returned files hold everything: $OUT/sweeps.tgz (each run's
# table, JSON and log, the GPU's clocks) and $OUT/summary.txt.
# BUDGET_S: seconds for the whole (default 560); the first A/B run always
# runs (within it), the tile sweep only with 150 s to spare for the second,
# and the second only with 120 s left; a skipped step says so.
#
#   [BUDGET_S=560] scripts/sweep_round.sh CARRY AB_SWEEP_FILE [TILE_SWEEP_FILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry=${1:?carry folder}
ab_file=${2:?A/B sweep file}
tile_file=${3:-}
out=${OUT:-./sweep-round-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work="$out/sweeps"
rm -rf "$work" "$out/sweeps.tgz" "$out/summary.txt"
mkdir -p "$work"
budget=${BUDGET_S:-560}
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
log() { echo "$*" | tee -a "$out/summary.txt"; }

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu \
  --format=csv > "$work/gpu.txt" 2>&1
run_ab() {  # name, least seconds it needs left (0: always runs)
  local name=$1 least=$2 limit
  limit=$(left)
  if ((limit < least || limit <= 0)); then
    log "$name: skipped, $limit s left"
    return
  fi
  OUT="$work/$name" LINE_TIMEOUT_S=${LINE_TIMEOUT_S:-90} timeout "$limit" \
    bash "$here/ab_sweep.sh" "$carry" "$ab_file" > "$work/$name.log" 2>&1
  log "$name: exit $? at $((SECONDS - start)) s"
  grep -m 1 '^new / old over' "$work/$name/ab.txt" 2>/dev/null | tee -a "$out/summary.txt"
}
run_ab ab1 0
if [[ -n "$tile_file" ]]; then
  limit=$(($(left) - 150))
  if ((limit > 30)); then
    OUT="$work/tiles" LINE_TIMEOUT_S=${LINE_TIMEOUT_S:-90} timeout "$limit" \
      bash "$here/tile_sweep.sh" "$carry" "$tile_file" > "$work/tiles.log" 2>&1
    log "tiles: exit $? at $((SECONDS - start)) s"
  else
    log "tiles: skipped, $(left) s left"
  fi
fi
run_ab ab2 120
tar -czf "$out/sweeps.tgz" -C "$out" sweeps && rm -rf "$work"
log "sweep_round: $((SECONDS - start)) s"
