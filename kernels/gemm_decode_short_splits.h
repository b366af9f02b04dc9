#pragma once

// The Hopper decode planner's rule for 32- and 64-token tiles whose splits
// are short (gemm_decode_plan.cc calls it once a range's tile and split are
// chosen): there the split-K partials, tokens x N fp32 values per split,
// weigh as much as the weights, and the 64-row one-warpgroup half of the
// 128-row tile in half the splits keeps the grid's blocks while writing and
// summing half the partials.

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

}  // namespace hummingd
