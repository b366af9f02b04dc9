#!/usr/bin/env bash
# Builds hummingd and the service bench in an existing build dir, runs the
# bench once and writes bench/results/service-<short commit>.{md,json}.
#   BUILD_DIR=build-bench bench/service/run.sh [extra bench flags...]
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build_dir="${BUILD_DIR:-./build}"
if [[ ! -d "${build_dir}" ]]; then
  echo "run.sh: build dir '${build_dir}' does not exist (configure it first)" >&2
  exit 2
fi

ninja -C "${build_dir}" -j"$(nproc)" hummingd hummingd_service_bench

commit="$(git -C "${repo_root}" rev-parse --short HEAD)"
commit_label="${commit}"
if [[ -n "$(git -C "${repo_root}" status --porcelain --untracked-files=no)" ]]; then
  commit_label="${commit} (+ uncommitted changes)"
fi
results="${repo_root}/bench/results"
mkdir -p "${results}"

"${build_dir}/bench/service/hummingd_service_bench" \
  --hummingd "${build_dir}/server/hummingd" \
  --commit "${commit_label}" \
  --markdown "${results}/service-${commit}.md" \
  --json "${results}/service-${commit}.json" \
  "$@"
echo "wrote ${results}/service-${commit}.md and .json"
