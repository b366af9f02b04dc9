#include "kernels/gemm_decode_sixteen_warps.h"

#include "kernels/gemm_decode_plan.h"
#include "kernels/gemm_decode_rules.h"

namespace hummingd {

// Planner v49 (bench/decode-notes.md v91; sweeps dd and de, twice each,
// bench/results/tile-sweep-dd-de-3c16bdc.md): 64x256x128, warps 1x16, four
// stages, pre-scaled, one block per SM, against the plan's 64x128x64 s6
// pre-scaled two per SM, same splits:
// - uint8 8192 x 28672 (4 splits, 56 k-tiles each) M = 33 / 48 / 64: 70.9 /
//   73.5 / 76.8 µs against 77.6-78.1 / 79.8-79.9 / 83.0; e4m3 68.7-68.8 /
//   70.7 / 74.0 against 69.6-70.1 / 73.3-73.5 / 76.3-76.6;
// - 28672 x 8192 (one split, 64 k-tiles; 112 blocks): uint8 74.5-74.6 /
//   75.5-75.9 / 78.6 against 82.8-83.2 / 84.3-84.6 / 86.8-86.9; e4m3
//   70.3-70.5 / 72.0-72.2 / 75.0-75.1 against 74.2 / 76.2 / 79.7.
// It lost on short splits: uint8 8192 x 8192 (4 splits of 16 k-tiles) 27.9
// against 26.7, e4m3 27.4 against 25.1-25.2; the 64-column k-tile form
// (eight stages) lost on 8192 x 8192 (29.7) and uint8 4096 x 14336 (8
// splits of 14: 29.4 against 26.0), and on 28672 x 8192 in two splits
// (224 blocks, past one per SM: 95.0 against 86.9). Deferred scales: 1-1.5%
// slower than pre-scaled (uint8 8192 x 8192 28.3, 28672 x 8192 79.3).
// 4-bit weights lost or tied with it (8192 x 8192 at 64 tokens 24.9 against
// 21.6, 8192 x 28672 62.3 against 62.0; at 32 tokens 16.7-17.9 against
// 15.5). Measured with groups of 128 in 16-bit scales.
// Planner v50 (sweep df, one run, bench/results/tile-sweep-df-8f045e7.md):
// bf16 activations too, uint8 M = 64 8192 x 28672 100.9 against 105.5 µs,
// 28672 x 8192 109.4 against 116.0. On the tile, k-major scales (uint8
// 28672 x 8192 80.7 against 79.3; e4m3 8192 x 28672 74.2 against 74.9) and
// bulk weight copies (83.1) do not pay; early=1 (79.1 in that one run)
// measured 0.991-1.001x in two runs of sweep ex (uint8 / e4m3, fp16 and bf16
// activations, 56 and 64 k-tiles per split) and is planned from v67
// (EarlyFirstTileFrom, gemm_decode_tile_options.cc).
GemmTileConfig SixteenWarpPrescaledTile() {
  GemmTileConfig wide;
  wide.mma = GemmMma::kWgmma;
  wide.block_m = 64;
  wide.block_n = 256;
  wide.block_k = 128;
  wide.warps_m = 1;
  wide.warps_n = 16;
  wide.stages = 4;
  wide.prescaled_scales = true;
  return wide;
}

bool IsSixteenWarpPrescaledTile(const GemmTileConfig& tile) {
  const GemmTileConfig wide = SixteenWarpPrescaledTile();
  return tile.mma == wide.mma && tile.block_m == wide.block_m &&
         tile.block_n == wide.block_n && tile.block_k == wide.block_k &&
         tile.warps_m == wide.warps_m && tile.warps_n == wide.warps_n &&
         tile.warp_split_k == wide.warp_split_k && tile.stages == wide.stages &&
         tile.prescaled_scales == wide.prescaled_scales;
}

std::optional<SplitTile> SixteenWarpEightBitTile(const GemmTileConfig& tile,
                                                 const QuantSpec& spec,
                                                 const LayerShape& shape,
                                                 int sm_count, int smem_limit) {
  const bool range_tile = tile.mma == GemmMma::kWgmma && tile.block_m == 64 &&
                          tile.prescaled_scales && tile.warps_n == 8 &&
                          tile.warp_split_k == 1;
  if (!range_tile || spec.weight.bits != 8 || HasUnmeasuredFineScales(spec)) {
    return std::nullopt;
  }
  const GemmTileConfig wide = SixteenWarpPrescaledTile();
  if (WgmmaBlocksPerSm(wide) != 1 ||
      !FitsAndValidates(wide, kOneBlockSharedBytes, spec, shape, smem_limit)) {
    return std::nullopt;
  }
  const int64_t n_blocks = shape.n / wide.block_n;
  const int64_t k_tiles = shape.k / wide.block_k;
  const double weight_bytes =
      static_cast<double>(shape.n) * shape.k * spec.weight.bits / 8.0;
  const double partial_bytes = 2.0 * wide.block_m * shape.n * 4.0;
  const int64_t wide_splits =
      ChooseSplitK(n_blocks, k_tiles, sm_count, /*min_tiles_per_split=*/4,
                   /*max_splits=*/16, partial_bytes, weight_bytes);
  const bool one_wave = n_blocks * wide_splits <= sm_count;
  const bool long_splits =
      k_tiles >= kSixteenWarpMinTilesPerSplit * wide_splits;
  if (!one_wave || !long_splits) return std::nullopt;
  return SplitTile{wide, wide_splits};
}

}  // namespace hummingd
