#!/usr/bin/env bash
# The main job, end to end on a fresh machine: set up, start hummingd on a
# temp socket and cache dir, prefetch a sample model manifest for sm_90a,
# show what was compiled, restart the daemon and show that the second run is
# served from the cache, stop.
#
#   scripts/demo.sh [MANIFEST] [ARCH]
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$repo/build}"
manifest="${1:-$repo/deploy/examples/llama-3-8b-w4a16.yaml}"
arch="${2:-sm_90a}"

HUMMINGD_BUILD_TESTS="${HUMMINGD_BUILD_TESTS:-OFF}" "$repo/scripts/setup.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/hummingd-demo-XXXXXX")"
socket="$work/hummingd.sock"
cache="$work/cache"
daemon_pid=""
cleanup() {
  if [[ -n "$daemon_pid" ]] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -TERM "$daemon_pid"; wait "$daemon_pid" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

ctl() { "$build_dir/ctl/hummingctl" --socket "$socket" "$@"; }

start_daemon() {
  "$build_dir/server/hummingd" --socket "$socket" --cache-dir "$cache" \
    >>"$work/hummingd.log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 1 200); do
    if ctl health >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$daemon_pid" 2>/dev/null; then break; fi
    sleep 0.05
  done
  echo "demo: hummingd did not start; its log:" >&2
  cat "$work/hummingd.log" >&2
  exit 1
}

stop_daemon() {
  kill -TERM "$daemon_pid"
  wait "$daemon_pid"
  daemon_pid=""
}

echo "== hummingd demo: manifest $(basename "$manifest"), arch $arch"
echo "== run 1: cold cache ($cache)"
start_daemon
ctl prefetch "$manifest" --arch "$arch"
ctl ls
stop_daemon

echo
echo "== run 2: daemon restarted on the same cache"
start_daemon
ctl prefetch "$manifest" --arch "$arch"
echo "-- counters of the restarted daemon (compiles must be 0):"
ctl stats | grep -E '^(compiles|hits|misses|entries|bytes|corrupt_dropped):'
compiles="$(ctl stats | awk -F': ' '$1=="compiles"{print $2}')"
stop_daemon
if [[ "$compiles" != "0" ]]; then
  echo "demo: FAILED: the restarted daemon compiled $compiles kernels" >&2
  exit 1
fi
echo "demo: OK: everything the second run needed came from the cache"
