#!/usr/bin/env bash
# Packs the GPU round for a machine with a GPU, HERE (where it was built):
# the GPU test binary and the non-system shared libraries it needs go to
# DEST/{bin,lib} (default ./.device-carry, git-ignored). Nothing from the
# driver or the C/C++ runtime travels, and neither does NVRTC (109 MB; the
# device machine's CUDA 13 toolkit has it, scripts/gpu_round.sh checks).
#
#   [OLD_BENCH=path OLD_COMMIT=hash] [PATCH_BENCH=path PATCH_NAME=name] \
#     scripts/pack_gpu_round.sh [BUILD_DIR (default ./build)] [DEST]
set -euo pipefail
build=${1:-build}
dest=${2:-.device-carry}
binary="$build/tests/gpu/gpu_test"
[[ -x "$binary" ]] || { echo "pack_gpu_round: no $binary (build target gpu_test first)" >&2; exit 1; }

rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib" "$dest/scripts"
# The daemon half of the round (scripts/daemon_round.sh) travels when its
# binaries are built: the worker, the daemon and the CLI.
binaries=("$binary")
for optional in "$build/tests/gpu/daemon_round/gpu_daemon_worker" \
                "$build/server/hummingd" "$build/ctl/hummingctl" \
                "$build/bench/kernel/hummingd_gemm_bench"; do
  [[ -x "$optional" ]] && binaries+=("$optional")
done
cp scripts/daemon_round.sh bench/kernel/cublas_reference.py "$dest/scripts/"

for bin in "${binaries[@]}"; do
  cp "$bin" "$dest/bin/"
  strip --strip-debug "$dest/bin/$(basename "$bin")"
done

# The C ABI's shared library, for the Python SDK's GPU test
# (scripts/python_gpu_round.sh), with its own dependencies below.
client_library="$build/client/cpp/libhummingd_client.so.0"
if [[ -e "$client_library" ]]; then
  cp -L "$client_library" "$dest/lib/libhummingd_client.so.0"
  strip --strip-unneeded "$dest/lib/libhummingd_client.so.0" 2>/dev/null || true
  binaries+=("$client_library")
fi

# name => path lines from ldd; the libraries every Linux host provides (and
# must match its own glibc / driver) stay behind.
for bin in "${binaries[@]}"; do ldd "$bin"; done |
awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
while read -r name path; do
  case "$name" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libstdc++.so*|\
    libgcc_s.so*|ld-linux*|libcuda.so*|libnvrtc*) continue ;;
  esac
  [[ -e "$dest/lib/$name" ]] && continue
  cp -L "$path" "$dest/lib/$name"
  strip --strip-unneeded "$dest/lib/$name" 2>/dev/null || true
done

# Another build's bench, stripped, to DIR/bin: it runs on this build's
# shared libraries (the same distribution packages; a build with other
# dependencies is not supported).
carry_bench() {  # VARIABLE_NAME PATH DIR
  [[ -x "$2" ]] || { echo "pack_gpu_round: $1 '$2' is not an executable" >&2; exit 1; }
  mkdir -p "$3/bin"
  cp "$2" "$3/bin/hummingd_gemm_bench"
  strip --strip-debug "$3/bin/hummingd_gemm_bench" || true
}
# OLD_BENCH=path: for scripts/ab_sweep.sh (OLD_COMMIT names it).
if [[ -n "${OLD_BENCH:-}" ]]; then
  carry_bench OLD_BENCH "$OLD_BENCH" "$dest/old"
  echo "${OLD_COMMIT:-unknown}" > "$dest/old/COMMIT"
fi
# PATCH_BENCH=path: a bench built with a device-code patch applied
# (scripts/build_patch_bench.sh), for scripts/patch_ab.sh against this
# build's bench (PATCH_NAME names it).
if [[ -n "${PATCH_BENCH:-}" ]]; then
  carry_bench PATCH_BENCH "$PATCH_BENCH" "$dest/patch"
  echo "${PATCH_NAME:-patch}" > "$dest/patch/NAME"
fi

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n "$(git status --porcelain 2>/dev/null)" ]]; then
  commit="$commit+uncommitted"
fi
echo "$commit" > "$dest/COMMIT"
echo "pack_gpu_round: $(ls "$dest/lib" | wc -l) libraries, $(du -sh "$dest" | cut -f1) in $dest (commit $commit)"
