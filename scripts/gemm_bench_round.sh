#!/usr/bin/env bash
# The GEMM benchmark on a machine with a GPU (KERNELS.md's method): cuBLAS
# reference times through PyTorch, then hummingd_gemm_bench against them, the
# roofline and the targets, with a numerics check of every case. Takes the
# carry folder scripts/pack_gpu_round.sh made. Results go to $OUT (or
# ./gemm-bench-out): cublas.txt, gemm_bench.md, gemm_bench.json. Exits with
# the bench's status (nonzero when any numerics check failed).
#
#   [SHAPES=NxK,...] [MS=1,16,...] [SPECS='spec;spec'] \
#     scripts/gemm_bench_round.sh [CARRY] [extra hummingd_gemm_bench flags]
#
# SHAPES and MS, when set, go to both cublas_reference.py and the bench (so
# the two measure the same cases); SPECS goes to the bench. Unset, each tool
# uses its own defaults, which agree.
set -uo pipefail
carry=$(cd "${1:-./.device-carry}" && pwd) || exit 1
shift || true
out=${OUT:-./gemm-bench-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$carry/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

case_flags=()
[[ -n "${SHAPES:-}" ]] && case_flags+=(--shapes "$SHAPES")
[[ -n "${MS:-}" ]] && case_flags+=(--ms "$MS")
bench_flags=("${case_flags[@]}")
[[ -n "${SPECS:-}" ]] && bench_flags+=(--specs "$SPECS")

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
python3 "$carry/scripts/cublas_reference.py" "${case_flags[@]}" > "$out/cublas.txt" ||
  echo "gemm_bench_round: no cuBLAS reference (PyTorch missing?)" >&2
"$carry/bin/hummingd_gemm_bench" --cublas_json "$out/cublas.txt" \
  --markdown "$out/gemm_bench.md" --json "$out/gemm_bench.json" \
  "${bench_flags[@]}" "$@"
