#pragma once

// The Hopper decode planner's rule for 8-bit weights at 64 tokens in long
// splits (gemm_decode_plan.cc calls it once the range's tile and split are
// chosen): one 256-row block of four warpgroups per SM instead of two
// 128-row blocks of two. One ring then holds each SM's weight bytes in
// flight (four 32 KB stages, two of them ahead, against two blocks' six
// 8 KB stages, four ahead) and each k-tile's activations serve 256 rows
// instead of 128.

#include <cstdint>
#include <optional>

#include "kernels/gemm_config.h"
#include "kernels/gemm_decode_short_splits.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"

namespace hummingd {

// The sixteen-warp tile: 64x256x128, warps 1x16, four stages, pre-scaled.
GemmTileConfig SixteenWarpPrescaledTile();

// Whether `tile` has the sixteen-warp tile's shape, warps, stages and
// pre-scaled scales (whatever its other options: early=N, planner v67).
bool IsSixteenWarpPrescaledTile(const GemmTileConfig& tile);

// The sixteen-warp tile and its splits in place of the range tile `tile`,
// or nothing where the rule does not apply (not the pre-scaled 8-bit
// 64-token tile, fine scales, a layer whose N or K the tile does not
// divide, a grid past one block per SM, splits shorter than
// kSixteenWarpMinTilesPerSplit k-tiles) or the tile does not fit
// `smem_limit`. Any client can launch it (a plain wgmma tile); the planner
// gives it no k-major scales (KMajorScalesWin), and early=1 on splits of
// 56 k-tiles or more (EarlyFirstTileFrom, planners v67 / v68).
std::optional<SplitTile> SixteenWarpEightBitTile(const GemmTileConfig& tile,
                                                 const QuantSpec& spec,
                                                 const LayerShape& shape,
                                                 int sm_count, int smem_limit);

// The shortest splits, in 128-column k-tiles, on which the tile won.
inline constexpr int64_t kSixteenWarpMinTilesPerSplit = 32;

}  // namespace hummingd
