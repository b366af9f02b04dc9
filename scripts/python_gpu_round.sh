#!/usr/bin/env bash
# The Python SDK's GPU test (tests/python/gpu) on a GPU machine, against the
# libhummingd_client.so that scripts/pack_gpu_round.sh carried: embedded
# mode, so it compiles its kernels in-process with the machine's NVRTC. Runs
# from the repository root (the device tool's working copy holds
# client/python and tests/python). Needs python3 with torch (CUDA); without
# it the test reports itself skipped and this script says so. Output in $OUT
# (or ./python-gpu-round-out): python_gpu.log; the last line is the verdict.
#
#   scripts/python_gpu_round.sh [CARRY]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
carry=$(cd "${1:-./.device-carry}" && pwd) || { echo "python_gpu_round: no carry folder" >&2; exit 1; }
out=${OUT:-./python-gpu-round-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
library="$carry/lib/libhummingd_client.so.0"
[[ -e "$library" ]] || { echo "python_gpu_round: no $library (pack after building hummingd_client)" >&2; exit 1; }
# The carried libraries last: the client library's own (gRPC, Abseil,
# protobuf) are found there, while torch and Python keep the machine's
# zlib, OpenSSL and the rest.
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$carry/lib"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
  if [[ -e "$dir/libnvrtc.so.13" ]]; then export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$dir"; break; fi
done
export HUMMINGD_CLIENT_LIBRARY="$library"
export PYTHONPATH="$repo/client/python:$repo/tests/python"
export PYTHONDONTWRITEBYTECODE=1
(cd "$repo/tests/python" && python3 -m unittest -v gpu.test_quantized_linear_gpu) > "$out/python_gpu.log" 2>&1
rc=$?
grep -E "skipped|^(FAIL|ERROR):|Error|relative error|seed|^Ran |^OK|^FAILED" "$out/python_gpu.log" | head -40
if grep -q "skipped: no" "$out/python_gpu.log"; then
  echo "== python_gpu_round: SKIPPED ($(grep -m1 -o 'skipped: no [^)]*)\?' "$out/python_gpu.log")); exit $rc"
else
  echo "== python_gpu_round: $(grep -E '^(OK|FAILED)' "$out/python_gpu.log" | tail -1); exit $rc"
fi
exit $rc
