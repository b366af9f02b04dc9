#pragma once

// The M > 64 half of a GEMM plan on Hopper: the wgmma decode skeleton's
// 64-token tiles, ceil(M / 64) blocks per n-block, for every M range above
// the decode ranges (steps of 64 tokens to 2048, then 2049 and up;
// neighbouring steps that plan the same kernel merge), and from planner v29
// its 128-token tiles (two warpgroups of
// one 64-row block each, one block per SM; in grouped block order from 513)
// in the ranges above 128 where 0.9 x their busiest SM's work is at most
// the 64-token grid's (planners v30-v32): sweep be, 8192 x 8192 uint4 fp16
// M = 1024 240 against 254 µs, M = 8192 2097 against 2486. From planner
// v33 its 256-token tiles (64x256x16 wgmmas) above 960 where their busiest
// SM's work, weighed 0.9 x 0.9, is at most the others': sweep bj, the same
// layer M = 1024 199 against 222 µs, M = 8192 1836 against 2051.
// Against the mma.sync 128x128x64 tile planned there before (planner v26)
// they took 1.9-4.2x less time on the six layers of issue 5 (8192 x 8192
// uint4 fp16: M = 256 65 against 194 µs, M = 1024 254 against 663, M = 8192
// 2425 against 5483; bench/results/gemm-decode-74a7ba2.md), and 1.7-2.0x
// less with MXFP4, NVFP4 and float zero points (sweep bc). A pure function
// of (spec, N, K, SM count, shared-memory limit, launch ABI):
// deterministic.

#include <cstdint>
#include <vector>

#include "kernels/layer_shape.h"
#include "kernels/plan.h"
#include "kernels/quant_spec.h"

namespace hummingd {

// Entries for M 65 .. kDefaultMaxM, or none where the layer does not take
// the tiles (N or K not a multiple of 128, or a tile that does not fit the
// shared memory): the caller then plans the mma.sync tiles there. Requires
// WgmmaDecodeApplies.
// 128-token tiles (and grouped block order) only for launch_abi >=
// kLaunchAbiPrefillTiles, 256-token tiles only for launch_abi >=
// kLaunchAbiTokenTiles256.
std::vector<PlanEntry> PlanWgmmaPrefill(const QuantSpec& spec,
                                        const LayerShape& shape, int sm_count,
                                        int smem_limit, uint32_t launch_abi);

}  // namespace hummingd
