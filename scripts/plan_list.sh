#!/usr/bin/env bash
# Prints the sm_90a plans of a fixed set of 22 specs on 15 layers (one line
# per plan entry: spec, NxK, M range, config, grid, shared bytes) with a
# build's hummingd_planned_cubins --list, so that a planner change can say
# how many plan lines it moves: run it on the build before and after, diff.
#
#   scripts/plan_list.sh [BUILD_DIR] > plans.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
tool="$build/bench/kernel/hummingd_planned_cubins"
[[ -x "$tool" ]] || { echo "plan_list: no $tool (build first)" >&2; exit 1; }
specs=(
  "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16"
  "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16"
  "weight=uint8,group=128,scale=fp16,act=fp16,out=fp16"
  "weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16"
  "weight=uint4,group=128,scale=fp16,zero=int,act=fp16,out=fp16"
  "weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16"
  "weight=uint4,group=64,scale=fp16,zero=int,act=fp16,out=fp16"
  "weight=uint4,group=32,scale=fp16,zero=int,act=fp16,out=fp16"
  "weight=uint8,group=128,scale=fp16,zero=int,act=fp16,out=fp16"
  "weight=uint4,group=128,scale=fp16,zero=float,act=fp16,out=fp16"
  "weight=uint4,group=64,scale=fp16,act=fp16,out=fp16"
  "weight=uint4,group=32,scale=fp16,act=fp16,out=fp16"
  "weight=uint4,group=channel,scale=fp16,act=fp16,out=fp16"
  "weight=uint4,group=channel,scale=bf16,act=bf16,out=bf16"
  "weight=uint8,group=128,scale=bf16,act=bf16,out=bf16"
  "weight=uint8,group=channel,scale=fp16,act=fp16,out=fp16"
  "weight=uint4,group=32,scale=bf16,act=bf16,out=bf16"
  "weight=uint3,group=128,scale=fp16,act=fp16,out=fp16"
  "weight=uint6,group=128,scale=fp16,act=fp16,out=fp16"
  "weight=int4,group=128,scale=fp16,act=fp16,out=fp16"
  "weight=e4m3,group=128x128,scale=fp32,act=fp16,out=fp16"
  "weight=e2m1,group=16,scale=e4m3,scale2=tensor,act=fp16,out=fp16"
)
layers="8192x8192,28672x8192,8192x28672,4096x4096,6144x4096,4096x14336"
layers+=",3072x4096,1024x4096,3584x14336,8192x14336,14336x4096"
layers+=",5120x5120,13824x5120,2048x2048,12288x4096"
spec_list=$(IFS=';'; echo "${specs[*]}")
exec "$tool" --list --specs "$spec_list" --shapes "$layers"
