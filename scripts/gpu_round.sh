#!/usr/bin/env bash
# The whole GPU round on a machine with a GPU. Builds nothing: takes the
# binaries scripts/pack_gpu_round.sh packed into CARRY (default
# ./.device-carry), runs the GPU test binary with its JSON report, and prints
# the pass/fail counts and the launch-cost table. Results go to $OUT (or
# ./gpu-round-out): gpu.txt, gpu_test.json, gpu_test.log, launch_cost.{md,json},
# residency.md, summary.txt. GPU_TEST_FILTER (a gtest filter, e.g. 'Decode/*/108') runs
# only those tests, with the same library setup, and skips the daemon half.
#
#   [GPU_TEST_FILTER=...] scripts/gpu_round.sh [CARRY]
set -uo pipefail
carry=$(cd "${1:-./.device-carry}" && pwd) || { echo "gpu_round: no carry folder" >&2; exit 1; }
out=${OUT:-./gpu-round-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)

export LD_LIBRARY_PATH="$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# NVRTC is not carried (too large); the toolkit on the GPU machine has it.
nvrtc_dir=""
for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
  if [[ -e "$dir/libnvrtc.so.13" ]]; then nvrtc_dir=$dir; break; fi
done
if [[ -n "$nvrtc_dir" ]]; then
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$nvrtc_dir"
else
  echo "gpu_round: WARNING: no libnvrtc.so.13 under /usr/local/cuda" >&2
fi

{
  echo "commit: $(cat "$carry/COMMIT" 2>/dev/null || echo unknown)"
  echo "nvrtc: ${nvrtc_dir:-missing}"
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total \
    --format=csv,noheader 2>&1 || echo "nvidia-smi: not available"
} | tee "$out/gpu.txt"

missing=$(ldd "$carry/bin/gpu_test" | grep "not found")
if [[ -n "$missing" ]]; then
  echo "gpu_round: missing libraries:" >&2
  echo "$missing" >&2
fi

export HUMMINGD_GPU_RESULTS_DIR="$out"
filter_flags=()
[[ -n "${GPU_TEST_FILTER:-}" ]] && filter_flags=(--gtest_filter="$GPU_TEST_FILTER")
"$carry/bin/gpu_test" --gtest_output="json:$out/gpu_test.json" \
  "${filter_flags[@]}" > "$out/gpu_test.log" 2>&1
rc=$?
grep -E "^\[  FAILED |Failure|error:|Expected|Which is|of [0-9]+ elements|seed=" \
  "$out/gpu_test.log" | head -80

python3 - "$out/gpu_test.json" > "$out/summary.txt" <<'PY' || echo "no JSON report (exit $rc)" > "$out/summary.txt"
import json, sys
report = json.load(open(sys.argv[1]))
passed = failed = skipped = 0
for suite in report["testsuites"]:
    for test in suite["testsuite"]:
        if test.get("failures"):
            failed += 1
        elif test.get("result") == "SKIPPED" or test.get("status") == "NOTRUN":
            skipped += 1
        else:
            passed += 1
print(f"tests: {passed + failed + skipped}, passed: {passed}, failed: {failed}, "
      f"skipped: {skipped}, time: {report.get('time', '?')}")
PY
echo "== summary (exit $rc)"
cat "$out/summary.txt"
echo "== launch cost (host side, no sync)"
cat "$out/launch_cost.md" 2>/dev/null || echo "(no launch_cost.md: the test did not run)"
echo "== residency: the planner's model against the driver (first rows; all in residency.md)"
head -12 "$out/residency.md" 2>/dev/null || echo "(no residency.md: the test did not run)"

# The daemon half: two worker processes against one hummingd resolve the same
# kernels, the daemon compiles each once, and a restarted worker compiles
# nothing. Runs when the carry holds the daemon (pack_gpu_round.sh packs it).
if [[ -n "${GPU_TEST_FILTER:-}" ]]; then
  echo "== daemon round: skipped (GPU_TEST_FILTER=$GPU_TEST_FILTER)"
elif [[ -x "$carry/bin/hummingd" && -x "$carry/bin/gpu_daemon_worker" ]]; then
  echo "== daemon round: two workers, one daemon"
  "$carry/scripts/daemon_round.sh" "$carry" "$out" | tee "$out/daemon_round.txt"
  daemon_rc=${PIPESTATUS[0]}
  if [[ $daemon_rc -ne 0 && $rc -eq 0 ]]; then rc=$daemon_rc; fi
fi
# Last, so that a caller who keeps only the tail of the output (the device
# tool returns few files) still sees the suite's count and the exit status.
echo "== gpu_round: $(cat "$out/summary.txt"); exit $rc"
exit $rc
