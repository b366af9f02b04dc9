#!/usr/bin/env bash
# Builds hummingd_gemm_bench with a device-code patch applied (one kept
# under bench/patches/ for its A/B), copies it to OUT, and returns the tree
# and build to what they were: the patch is reversed and the bench rebuilt,
# so a later scripts/pack_gpu_round.sh packs main's own binaries. The tree
# must be clean where the patch applies (git apply --check first).
#
#   scripts/build_patch_bench.sh PATCH OUT_FILE [BUILD_DIR (default ./build)]
# then
#   PATCH_BENCH=OUT_FILE PATCH_NAME=v76 scripts/pack_gpu_round.sh build .device-carry
# and on the device
#   scripts/patch_ab.sh .device-carry SWEEP_FILE
set -euo pipefail
patch=${1:?patch file}
out=${2:?output file for the patched bench}
build=${3:-build}
[[ -r "$patch" ]] || { echo "build_patch_bench: cannot read patch '$patch'" >&2; exit 1; }
[[ -f "$build/build.ninja" ]] || { echo "build_patch_bench: no build in '$build' (scripts/setup.sh first)" >&2; exit 1; }
# git apply skips the paths outside the current folder without a word, so
# the patch is applied from the repository's root, with the paths made
# absolute first.
patch=$(realpath "$patch")
build=$(realpath "$build")
mkdir -p "$(dirname "$out")"
out=$(realpath "$out")
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
git apply --check "$patch"
git apply "$patch"
# Whatever happens from here, the tree gets its own code back.
trap 'git apply -R "$patch"; ninja -C "$build" hummingd_gemm_bench > /dev/null' EXIT
if git diff --quiet; then
  echo "build_patch_bench: $patch changed nothing in the tree" >&2
  exit 1
fi
ninja -C "$build" hummingd_gemm_bench > /dev/null
cp "$build/bench/kernel/hummingd_gemm_bench" "$out"
echo "build_patch_bench: $out built with $patch"
