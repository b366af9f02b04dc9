#!/usr/bin/env bash
# The daemon half of the GPU round (called by gpu_round.sh with the carry and
# output folders): starts the carried hummingd on a temp socket and cache,
# runs two gpu_daemon_worker processes at once, checks they were served the
# same kernels, that the daemon compiled each kernel exactly once, and that a
# restarted worker compiles nothing. Prints PASS/FAIL lines; exit 0 on PASS.
set -uo pipefail
carry=$1
out=$2
work=$(mktemp -d)
socket="$work/hummingd.sock"
ctl() { "$carry/bin/hummingctl" --socket "$socket" "$@"; }
counter() { ctl stats | awk -F': ' -v name="$1" '$1 == name {print $2}'; }
fail=0
check() {  # check NAME CONDITION-RESULT(0/1) DETAIL
  if [[ $2 -eq 0 ]]; then echo "PASS $1 ($3)"; else echo "FAIL $1 ($3)"; fail=1; fi
}

"$carry/bin/hummingd" --socket "$socket" --cache-dir "$work/cache" \
  >"$out/hummingd.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do ctl health >/dev/null 2>&1 && break; sleep 0.1; done

"$carry/bin/gpu_daemon_worker" "$socket" >"$work/worker1.txt" 2>&1 &
w1=$!
"$carry/bin/gpu_daemon_worker" "$socket" >"$work/worker2.txt" 2>&1 &
w2=$!
wait $w1; rc1=$?
wait $w2; rc2=$?
cat "$work/worker1.txt"
keys1=$(grep '^keys:' "$work/worker1.txt")
keys2=$(grep '^keys:' "$work/worker2.txt")
distinct=$(echo "${keys1#keys: }" | tr ',' '\n' | grep -c .)
compiles=$(counter compiles)
check "worker 1 exact" $rc1 "exit $rc1"
check "worker 2 exact" $rc2 "exit $rc2"
[[ -n "$keys1" && "$keys1" == "$keys2" ]]; check "same kernels for both workers" $? "$distinct distinct artifacts"
[[ "$compiles" == "$distinct" ]]; check "each kernel compiled once" $? "compiles=$compiles distinct=$distinct"

"$carry/bin/gpu_daemon_worker" "$socket" >"$work/worker3.txt" 2>&1
rc3=$?
after=$(counter compiles)
check "restarted worker exact" $rc3 "exit $rc3"
[[ "$after" == "$compiles" ]]; check "restarted worker compiled nothing" $? "compiles before=$compiles after=$after"
echo "-- daemon counters"
ctl stats | grep -E '^(compiles|hits|misses|entries|memo_hits|requests):' 
exit $fail
