#pragma once

// What a client passes to GEMM kernels (the wire's KernelRequest.launch_abi):
// the GemmArgs layout and what its pointers point to. A client built before
// a change passes what it knew (an older struct, or a tensor in the
// checkpoint layout where a newer kernel expects another), so the planner
// emits only kernels the request's ABI can launch
// (kernels/gemm_decode_plan.h), and the value is part of a GEMM plan key
// (kernels/planner.h, PlanKeyLaunchAbi). GemmArgs has kept its v1 layout
// (kernels/device/gemm/wna16_args.cuh): growing it would make an old
// client's launch copy past its struct for every kernel.
//
// Header-only and dependency-free: the daemon, the clients (C++ SDK,
// hummingctl, bench, tests) and the comment on
// kernels/device/gemm/wna16_args.cuh all refer to these values.

#include <cstdint>

namespace hummingd {

// 0 (absent on the wire: clients before the field): GemmArgs::scales is the
// checkpoint tensor for every kernel; no layout=kmajor tiles.
inline constexpr uint32_t kLaunchAbiOriginal = 0;
// The client passes layout=kmajor kernels the [column][row] copy of group
// scales it prepares (kernels/k_major_scales.h; channel-wise scales as they
// are) as GemmArgs::scales, so such tiles may be planned.
inline constexpr uint32_t kLaunchAbiKMajorScales = 1;
// The client reads ksplit=S tile texts (k-split warps, planner v19): the
// same arguments as any unsplit tile, but a client before it refuses the
// text when it loads the set, so such tiles are planned only from here.
// (Its loader only parses a tile text, so 16-token ksplit tiles, planned
// since v20, need nothing newer.)
inline constexpr uint32_t kLaunchAbiKSplitTiles = 2;
// The client launches 128-token wgmma tiles (`tile=128x...`) and
// `order=grouped` ones (planners v29-v32, M > 128 on Hopper): same
// arguments and a grid the plan entry spells out. Conservative: clients
// since ABI 2 parse the 128-token text and those since e9cce17 the
// grouped one, but none before this step was tested launching them, and
// older ones refuse `order=grouped` when they load the set.
inline constexpr uint32_t kLaunchAbiPrefillTiles = 3;
// The client launches 256-token wgmma tiles (`tile=256x...`, planner v33,
// M > 960 on Hopper): the same arguments and a grid the plan entry spells
// out, but a client of ABI 3 refuses the tile text (BM 256 was not a
// wgmma tile before this step).
inline constexpr uint32_t kLaunchAbiTokenTiles256 = 4;
// The client reads `early=N` tile texts (planner v38, bench/decode-notes.md
// v83): the same arguments and grid as the tile without it, but a client of
// ABI 4 refuses the text when it loads the set.
inline constexpr uint32_t kLaunchAbiEarlyTiles = 5;
// The client reads `copy=warprun` tile texts (planner v43,
// bench/decode-notes.md v86): the same arguments and grid as the tile
// without it, but a client of ABI 5 refuses the text when it loads the set.
inline constexpr uint32_t kLaunchAbiWarpRunWeights = 6;
// What this build's launchers (QuantizedLinear, LaunchKernel) pass. Bump
// it, with a new constant above, whenever a planned kernel expects
// arguments (or a tile text) an older client does not handle; requests
// above it are refused (INVALID_ARGUMENT).
inline constexpr uint32_t kCurrentLaunchAbi = kLaunchAbiWarpRunWeights;

}  // namespace hummingd
