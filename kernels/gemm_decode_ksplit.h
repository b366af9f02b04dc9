#pragma once

// The k-split warp tiles of the Hopper decode plan (`ksplit=S`, planners
// v19-v25, v55-v57, bench/decode-notes.md v46-v58, v102-v104): at 8 and 16
// tokens a block's warps split each k-tile S ways and sum the slices in
// shared memory, so a 16- or 32-row block covers its whole K unsplit and
// the ~1.1 µs split-K tail goes; at 16 and 32 tokens (planner v57) a 64-row
// block's four warpgroups do the same on wgmma, one block per SM, where its
// blocks fill a wave (since planner v60 from 6/11 of one on K up to 8192,
// since v62 from K = 2048 / 3072 at any such fill); at 16 tokens planner
// v59 gives 8-bit weights on long K the 32-row sixteen-warp blocks
// (decode-notes v107, v108); at 16 and 32 tokens planners v64 / v65 give
// 8-bit weights with fp16 activations 64-row blocks of two warpgroup slices
// (decode-notes v109, v111); planner v69 gives the 4-bit slices and the
// 16-token sixteen-warp blocks channel-wise scales, groups of 128 or 64
// with integer zero points and (slices) groups of 32 (decode-notes v121).
// Which layers and specs take them, and in which shape, is what the sweeps
// measured; every other case keeps the planner's tile.

#include <optional>

#include "kernels/gemm_config.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"

namespace hummingd {

// The k-split tile for `tokens` (8, 16 or 32) of the layer, unsplit, or
// nullopt where no measured rule takes the spec and shape (or its ring
// does not fit smem_limit). Only for clients of kLaunchAbiKSplitTiles.
std::optional<GemmTileConfig> KSplitWarpTile(int tokens, const QuantSpec& spec,
                                             const LayerShape& shape,
                                             int sm_count, int smem_limit);

}  // namespace hummingd
