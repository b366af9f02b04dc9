#pragma once

// The k-split warp tiles of the Hopper decode plan (`ksplit=S`, planners
// v19-v25, bench/decode-notes.md v46-v58): at 8 and 16 tokens a block's
// warps split each k-tile S ways and sum the slices in shared memory, so a
// 16- or 32-row block covers its whole K unsplit and the ~1.1 µs split-K
// tail goes. Which layers and specs take them, and in which shape, is
// what the sweeps measured; every other case keeps the planner's tile.

#include <optional>

#include "kernels/gemm_config.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"

namespace hummingd {

// The k-split tile for `tokens` (8, 16 or 32) of the layer, unsplit, or
// nullopt where no measured rule takes the spec and shape (or its ring
// does not fit smem_limit). Only for clients of kLaunchAbiKSplitTiles.
// k-split slices of whole warpgroups at 16 and 32 tokens (planner v57):
// one 64-row block per SM over the whole of K, unsplit, or nullopt where
// the rule does not take the spec and shape. KSplitWarpTile tries it first.
std::optional<GemmTileConfig> WarpgroupSliceTile(int tokens,
                                                 const QuantSpec& spec,
                                                 const LayerShape& shape,
                                                 int sm_count, int smem_limit);

std::optional<GemmTileConfig> KSplitWarpTile(int tokens, const QuantSpec& spec,
                                             const LayerShape& shape,
                                             int sm_count, int smem_limit);

}  // namespace hummingd
