#!/bin/bash
# Installs the client component of a build tree into a temp prefix, builds
# client/cpp/examples/consumer against it (find_package and pkg-config), and
# runs both programs in embedded mode on a tiny layer.
#   consumer_package_test.sh BUILD_DIR SOURCE_DIR CMAKE_GENERATOR
set -euo pipefail
build_dir=$1
source_dir=$2
generator=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
spec="weight=uint4,group=128,scale=fp16,zero=none,act=fp16,out=fp16"

cmake --install "$build_dir" --prefix "$work/prefix" --component client
for header in hummingd/kernel_client.h hummingd/hummingd.h \
              hummingd/v1/kernel_service.pb.h; do
  test -f "$work/prefix/include/$header" || { echo "missing $header"; exit 1; }
done

cmake -S "$source_dir/client/cpp/examples/consumer" -B "$work/build" \
  -G "$generator" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix"
cmake --build "$work/build"

"$work/build/consumer_cpp" --help | grep -q "usage: consumer_cpp"
out=$(HUMMINGD_SOCKET="$work/no-daemon.sock" "$work/build/consumer_cpp" \
  --cache-dir "$work/cache" "$spec" 256 256 sm_80)
echo "$out"
grep -q "mode: embedded" <<<"$out"
grep -q "hummingd_dequant" <<<"$out"

out=$("$work/build/consumer_c" embedded "" "$work/cache-c" "$spec" 256 256 sm_80)
echo "$out"
grep -q "kernels: [1-9]" <<<"$out"

# pkg-config: a plain C compile and link with nothing but the .pc file.
export PKG_CONFIG_PATH="$(dirname "$(find "$work/prefix" -name hummingd.pc)")"
cc -o "$work/consumer_c_pc" "$source_dir/client/cpp/examples/consumer/consumer.c" \
  $(pkg-config --cflags --libs hummingd)
LD_LIBRARY_PATH="$(pkg-config --variable=libdir hummingd)" \
  "$work/consumer_c_pc" embedded "" "$work/cache-pc" "$spec" 256 256 sm_80 \
  | grep -q "kernels: [1-9]"
echo "consumer package: ok"
