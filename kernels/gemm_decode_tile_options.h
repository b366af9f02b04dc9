#pragma once

// The options the Hopper decode planner sets on a range's chosen tile
// (gemm_decode_plan.cc) once its shape, stages and split are fixed: the
// prologue's early tiles (`early=N`) and the weights' copy path
// (`copy=bulk`, `copy=warprun`), k-major scales on long splits
// (`layout=kmajor`; the 256-row tiles' own rule is gemm_decode_plan.cc's),
// and pre-scaled operands for groups of 32 and 64 at 32 and 64 tokens
// (`scales=pre`).
// Each wins on some tiles and layers and loses on others by a few percent,
// so each rule names what the sweeps measured (bench/decode-notes.md) and
// every other case keeps the tile as it was.

#include <cstdint>
#include <optional>

#include "kernels/gemm_config.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"

namespace hummingd {

// The first M of the range [m_min, ...] from which `tile` in `splits`
// split-K slices takes early=1 (a range that takes it from above its m_min
// is planned as two entries), or nothing. Only for clients of
// kLaunchAbiEarlyTiles.
std::optional<int64_t> EarlyFirstTileFrom(const GemmTileConfig& tile,
                                          int64_t splits, const QuantSpec& spec,
                                          const LayerShape& shape,
                                          int64_t m_min);

// Whether `tile` in `splits` slices copies its weights by cp.async.bulk on
// per-stage mbarriers (copy=bulk) instead of per-thread cp.async. Any
// client can launch it.
bool BulkWeightsWin(const GemmTileConfig& tile, int64_t splits,
                    const QuantSpec& spec, const LayerShape& shape);

// Whether `tile` in `splits` slices takes warp-run weight slots
// (copy=warprun). Only for clients of kLaunchAbiWarpRunWeights.
bool WarpRunWeightsWin(const GemmTileConfig& tile, int64_t splits,
                       const QuantSpec& spec, const LayerShape& shape);

// Whether `tile` in `splits` slices reads k-major scales (layout=kmajor)
// beyond the 256-row tiles that take them (planner v61): the 128-row
// 256-column tiles at 16 and 32 tokens and the 32-token warpgroup k-slices,
// on long splits in one wave of `sm_count` SMs. Only for clients of
// kLaunchAbiKMajorScales.
bool KMajorScalesOnLongSplitsWin(const GemmTileConfig& tile, int64_t splits,
                                 const QuantSpec& spec, const LayerShape& shape,
                                 int sm_count);

// Whether `tile` scales each operand pair (scales=pre) in place of the
// deferred scales its spec would take: the 32-token warpgroup k-slices in
// groups of 32 (planner v69), and the 64-token tiles in groups of 32 (v70)
// and 64 (v71, v72); with fp16 integer zero points, groups of 32 on the
// three-stage 64x128x128 tile (v73) and its four-stage half (v74). (8-bit
// weights' 64-token tiles are pre-scaled when the plan builds them,
// gemm_decode_plan.cc.) Any client can launch it.
bool PrescaledScalesWin(const GemmTileConfig& tile, const QuantSpec& spec);

// Whether the 64-token two-warpgroup tile of fp16 uint4 in groups of 128
// scales each operand pair when its split-K slices hold unequal k-tile
// counts (planner v77, sweep fr: 6144 x 4096 in 5 splits of 6-7 k-tiles).
// Any client can launch it.
bool PrescaledOnUnevenSplitsWin(const GemmTileConfig& tile, int64_t splits,
                                const QuantSpec& spec, const LayerShape& shape);

}  // namespace hummingd
