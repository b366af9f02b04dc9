#pragma once

// The Hopper decode planner's rules for 16- to 64-token tiles whose splits
// are short, or many (gemm_decode_plan.cc calls them once a range's tile and
// split are chosen): there the split-K partials, tokens x N fp32 values per
// split, weigh as much as the weights, and the 64-row one-warpgroup half of
// the 128-row tile in fewer splits fills the same or more block slots while
// writing and summing fewer partials per block.

#include <cstdint>
#include <optional>

#include "kernels/gemm_config.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"

namespace hummingd {

struct SplitTile {
  GemmTileConfig tile;
  int64_t splits = 1;
};

// The half tile and its splits for `tile` in `splits` split-K slices, or
// nothing where the rule does not apply or the half tile does not fit
// `smem_limit`. Any client can launch it (a plain wgmma tile).
std::optional<SplitTile> ShortSplitHalfTile(const GemmTileConfig& tile,
                                            int64_t splits,
                                            const QuantSpec& spec,
                                            const LayerShape& shape,
                                            int smem_limit);

// Planner v51: the 8-bit pre-scaled 64-token tile (64x128x64, six stages,
// two per SM; since planner v74 five with integer zero points, whose windows
// leave no room for six) in an even count of >= 4 splits of <= 8 k-tiles gives
// way to its 64-row half with 128-column k-tiles (64x64x128, four stages,
// pre-scaled) in half the splits, as ShortSplitHalfTile does for plain
// tiles. Nothing where the rule does not apply or the half does not fit.
// Any client can launch it (a plain wgmma tile).
std::optional<SplitTile> ShortSplitPrescaledHalfTile(const GemmTileConfig& tile,
                                                     int64_t splits,
                                                     const QuantSpec& spec,
                                                     const LayerShape& shape,
                                                     int smem_limit);

// Planner v52: 8-bit weights' 16- and 32-token 128-row tiles in 8 or more
// long splits give way to their 64-row halves three per SM in as many
// splits as three per SM hold (fewer than before). Nothing where the rule
// does not apply or the half does not fit three per SM. Any client can
// launch it (a plain wgmma tile).
std::optional<SplitTile> EightBitLongSplitHalfTile(
    const GemmTileConfig& tile, int64_t splits, const QuantSpec& spec,
    const LayerShape& shape, int sm_count, int smem_limit);

// Planners v46-v48: the 128-row tiles of 128-column k-tiles that 6144 x
// 4096 ran at 16 tokens (three per SM, an even split count) and 32 tokens
// (two per SM, an odd split count, which ShortSplitHalfTile leaves; since
// planner v60 4-bit groups of 128 and 64 take warpgroup k-slices there
// first, since planner v64 8-bit weights with fp16 activations at 32
// tokens, and since v69 channel-wise scales, integer zero points (with bf16
// activations not at 32 tokens) and groups of 32 at 16 tokens, so these
// tiles reach the rule on that layer in groups of 32 at 32 tokens, with
// 8-bit weights and a second scale, and on narrower layers such as 3584 x
// 6144 or 4608 x 4096) give way to their 64-row halves three per SM in fewer
// splits, which write half the partials per block and fewer in all. Nothing
// where the rule does not apply or the half tile does not fit three per SM.
// Any client can launch it (a plain wgmma tile).
std::optional<SplitTile> ThreePerSmHalfTile(const GemmTileConfig& tile,
                                            int64_t splits,
                                            const QuantSpec& spec,
                                            const LayerShape& shape,
                                            int sm_count, int smem_limit);

}  // namespace hummingd
