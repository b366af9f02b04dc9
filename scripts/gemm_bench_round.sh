#!/usr/bin/env bash
# The GEMM benchmark on a machine with a GPU (KERNELS.md's method): cuBLAS
# reference times through PyTorch, then hummingd_gemm_bench against them and
# the roofline. Takes the carry folder scripts/pack_gpu_round.sh made.
# Results go to $OUT (or ./gemm-bench-out): cublas.txt, gemm_bench.md.
#
#   scripts/gemm_bench_round.sh [CARRY] [extra hummingd_gemm_bench flags]
set -uo pipefail
carry=$(cd "${1:-./.device-carry}" && pwd) || exit 1
shift || true
out=${OUT:-./gemm-bench-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$carry/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
python3 "$carry/scripts/cublas_reference.py" > "$out/cublas.txt" ||
  echo "gemm_bench_round: no cuBLAS reference (PyTorch missing?)" >&2
"$carry/bin/hummingd_gemm_bench" --cublas_json "$out/cublas.txt" \
  --markdown "$out/gemm_bench.md" "$@"
