#!/usr/bin/env bash
# Installs what hummingd needs (Debian packages; the CUDA toolkit must already
# be in /usr/local/cuda) and builds it. Idempotent: a second run only builds.
#
#   scripts/setup.sh            # configure + build into ./build
#   BUILD_DIR=out scripts/setup.sh
#   HUMMINGD_BUILD_TESTS=OFF scripts/setup.sh   # daemon + CLI only
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$repo/build}"
build_tests="${HUMMINGD_BUILD_TESTS:-ON}"

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libspdlog-dev librocksdb-dev libgtest-dev libgmock-dev
  libyaml-cpp-dev libssl-dev libxxhash-dev
  python3
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  # env puts DEBIAN_FRONTEND in apt-get's own environment (sudo's env_reset
  # would drop it from ours).
  apt=(env DEBIAN_FRONTEND=noninteractive apt-get)
  if [[ $(id -u) -ne 0 ]]; then
    if ! command -v sudo >/dev/null; then
      echo "setup: installing packages needs root: run this as root, or install sudo" >&2
      exit 1
    fi
    apt=(sudo "${apt[@]}")
  fi
  "${apt[@]}" update -qq
  "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}"
fi

cuda_root="${CUDA_HOME:-/usr/local/cuda}"
if [[ ! -e "$cuda_root/include/nvrtc.h" ]]; then
  echo "setup: the CUDA toolkit (NVRTC headers and library) is required in $cuda_root;" >&2
  echo "       install CUDA 12.x/13.x there or set CUDA_HOME." >&2
  exit 1
fi

cmake -S "$repo" -B "$build_dir" -G Ninja \
  -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" \
  -DCUDAToolkit_ROOT="$cuda_root" \
  -DHUMMINGD_BUILD_TESTS="$build_tests" >/dev/null
jobs="${HUMMINGD_BUILD_JOBS:-$(nproc)}"
cmake --build "$build_dir" -j "$jobs"
echo "setup: built into $build_dir"
