#!/usr/bin/env bash
# Sets up (idempotently), builds everything including tests, runs all tests.
# GPU tests are skipped, visibly, on machines without a GPU.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$repo/build}"

HUMMINGD_BUILD_TESTS=ON "$repo/scripts/setup.sh"
cd "$build_dir"
ctest --output-on-failure -j "${HUMMINGD_TEST_JOBS:-2}" --timeout 900 "$@"
