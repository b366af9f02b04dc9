#!/usr/bin/env bash
# Compares two trees' planned kernels instruction by instruction, no GPU
# needed: OLD and NEW are folders that `hummingd_planned_cubins --out`
# filled (one per build of the tree). Installs NVIDIA's nvdisasm and
# cuobjdump from PyPI into HUMMINGD_SASS_TOOLS (default
# ~/.cache/hummingd-sass-tools) the first time, since the CUDA toolkit here
# ships neither. Prints scripts/sass_compare.py's table.
#
#   scripts/sass_compare.sh OLD NEW
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
old=${1:?old cubin folder}
new=${2:?new cubin folder}
tools=${HUMMINGD_SASS_TOOLS:-$HOME/.cache/hummingd-sass-tools}
find_tool() { find "$tools" -type f -name "$1" -perm -u+x 2>/dev/null | head -1; }
if [[ -z "$(find_tool nvdisasm)" || -z "$(find_tool cuobjdump)" ]]; then
  echo "sass_compare: installing nvdisasm and cuobjdump into $tools" >&2
  python3 -m pip install --quiet --no-deps --target "$tools" \
    nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump
  find "$tools" -type f \( -name nvdisasm -o -name cuobjdump \) -exec chmod u+x {} +
fi
python3 "$here/sass_compare.py" "$(find_tool nvdisasm)" "$(find_tool cuobjdump)" \
  "$old" "$new"
