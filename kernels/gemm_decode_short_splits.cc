#include "kernels/gemm_decode_short_splits.h"

#include <algorithm>

#include "kernels/gemm_decode_rules.h"

namespace hummingd {
namespace {

// The weights the halves were measured with: 4-bit (sweeps cq, cr, cs), and
// 8-bit with fp16 activations at 32 tokens (planner v51, sweep dh:
// bench/results/tile-sweep-dh-di-111313f.md).
bool HalvesWeights(const GemmTileConfig& tile, const QuantSpec& spec) {
  if (spec.weight.bits <= 4) return true;
  return spec.weight.bits == 8 && tile.block_m == 32 &&
         spec.activation_type == DataType::kFp16;
}

// A 128-row two-warpgroup wgmma tile of 128-column k-tiles without copy,
// scale or prologue options (its launch bounds each rule checks).
bool IsPlainTwoWarpgroupShape(const GemmTileConfig& tile) {
  return tile.mma == GemmMma::kWgmma && tile.block_n == 128 &&
         tile.block_k == 128 && tile.warps_m == 1 && tile.warps_n == 8 &&
         tile.warp_split_k == 1 && !tile.prescaled_scales &&
         !tile.k_major_scales && !tile.bulk_weights && !tile.warp_run_weights &&
         tile.early_tiles == 0;
}

// What both rules halve: that tile, of weights HalvesWeights takes with
// scales the other decode rules take, on a K that its k-tiles divide.
bool IsPlainTwoWarpgroupTile(const GemmTileConfig& tile, const QuantSpec& spec,
                             const LayerShape& shape) {
  return IsPlainTwoWarpgroupShape(tile) && HalvesWeights(tile, spec) &&
         !HasUnmeasuredFineScales(spec) && shape.k % tile.block_k == 0;
}

// The tile's one-warpgroup half in `splits` splits, three per SM or (0)
// two, where that half is launchable.
std::optional<SplitTile> HalfInSplits(const GemmTileConfig& tile,
                                      int blocks_per_sm, int64_t splits,
                                      const QuantSpec& spec,
                                      const LayerShape& shape, int smem_limit) {
  const int shared_budget =
      blocks_per_sm == 3 ? kThreeBlocksSharedBytes : kTwoBlocksSharedBytes;
  std::optional<GemmTileConfig> half = OneWarpgroupHalfTile(
      tile, blocks_per_sm, shared_budget, spec, shape, smem_limit);
  if (!half.has_value()) return std::nullopt;
  return SplitTile{*half, splits};
}

}  // namespace

// Planner v44, v45 (128-column k-tiles only; bench/decode-notes.md v87,
// sweep cq in bench/results/tile-sweep-cq.md): the 128-row two-warpgroup
// tile at 32 and 64 tokens in splits of at most 4 k-tiles spends most of its
// launch after its loop (the timeline probe on 4096 x 4096 at M = 64, 8 splits
// of 4: accumulators final at 14.1 µs median, split-K arrivals 16.1 median
// and 20.0 at p90, the last output at 21.0, against a loop from 10.8 to 13.3),
// writing and summing 8 MB of partials beside 8 MB of weights. The 64-row half
// tile in half the splits, same block count, two per SM: 4096 x 4096 64x64x128
// s4 in 4 splits at M = 64 9.80 µs against 11.79 / 11.85 (fp16), 9.74 against
// 11.41 (bf16); 32x64x128 s4 in 4 splits at M = 32 7.46 against 8.12 /
// 8.15. It tied or lost where the splits are long (4096 x 14336, 14 k-tiles:
// 21.10 against 21.11; 8192 x 8192, 16: 23.36 against 21.35), and an odd
// split count cannot keep the block count (6144 x 4096 in 5: 64x64x128 in 3
// splits 17.99 against 13.37, its blocks past two per SM). Measured on
// 128-column k-tiles (the 256-column half tiles lost: 4096 x 4096 at 64
// tokens 14.08, at 32 10.55) with uint4 in groups of 128 and 16-bit scales;
// other 4-bit specs with coarse or group-rule scales take it unmeasured, as
// the other decode rules take them. Planner v51 (sweep dh, twice in one
// call): 8-bit weights with fp16 activations at 32 tokens too, 4096 x 4096
// 32x64x128 s4 in 4 splits against 32x128x128 s4 in 8: uint8 M = 24 / 32
// 8.65-8.66 / 8.76-8.78 µs against 9.84-9.86 / 10.10-10.11, e4m3 8.58 /
// 8.72-8.73 against 9.69-9.74 / 10.01 (six stages or 64-column k-tiles in
// eight: within 2% either way). Their 64-token tile is pre-scaled:
// ShortSplitPrescaledHalfTile.
std::optional<SplitTile> ShortSplitHalfTile(const GemmTileConfig& tile,
                                            int64_t splits,
                                            const QuantSpec& spec,
                                            const LayerShape& shape,
                                            int smem_limit) {
  // An even split count halves into the same number of blocks.
  if ((tile.block_m != 32 && tile.block_m != 64) ||
      !IsPlainTwoWarpgroupTile(tile, spec, shape) || tile.blocks_per_sm != 0 ||
      splits < 4 || splits % 2 != 0) {
    return std::nullopt;
  }
  const int64_t k_tiles = shape.k / tile.block_k;
  if (k_tiles > 4 * splits) return std::nullopt;
  // Integer zero points' 64-token tile runs three stages, the four-stage one
  // 32 bytes past two per SM with their windows; its half takes four again
  // (planner v74, sweep fo, bench/results/tile-sweep-fo-83922c0-run{1,2}.txt,
  // decode-notes v129, twice: 4096 x 4096 M = 33 / 64 fp16 groups of 128
  // 9.47-9.51 / 9.98 µs against 10.54-10.58 / 11.08-11.10, bf16 0.92x, groups
  // of 64 0.95x, of 32 0.97-0.99x deferred and 0.89x pre-scaled).
  // Measured with uint4 and 16-bit scales, so only those; others (and a half
  // that does not fit in four) halve as they are.
  if (tile.block_m == 64 && tile.stages == 3 &&
      spec.zero_point == ZeroPointKind::kInteger &&
      IsUint4WithSixteenBitScales(spec)) {
    GemmTileConfig four_stages = tile;
    four_stages.stages = 4;
    if (std::optional<SplitTile> half =
            HalfInSplits(four_stages, /*blocks_per_sm=*/0, splits / 2, spec,
                         shape, smem_limit)) {
      return half;
    }
  }
  return HalfInSplits(tile, /*blocks_per_sm=*/0, splits / 2, spec, shape,
                      smem_limit);
}

// Planners v46-v48 (bench/decode-notes.md v88, v89; sweeps cq and cr,
// bench/results/tile-sweep-cq.md and tile-sweep-cr-eab4263.json, and sweep
// cs, tile-sweep-cs-2f06944.md): on 6144 x 4096 (48 128-row blocks, 32
// k-tiles of 128 columns)
// - at 16 tokens the three-per-SM tile 16x128x128 s4 in 8 splits (384
//   blocks) ran 7.57 / 7.56 / 7.69 µs (fp16) and 7.69 / 7.71 (bf16); its
//   half with 256-column k-tiles, 16x64x256 s4 three per SM in 4 splits
//   (the same 384 blocks, each 4 k-tiles of the same bytes), 6.71 / 6.72 /
//   6.75 (fp16) and 7.04 (bf16). Four per SM lost (16x64x256 s3: 7.58,
//   bf16 7.69; 16x64x128 in 5 splits: 7.01);
// - at 32 tokens the two-per-SM tile 32x128x128 s4 in 5 splits (240 blocks)
//   ran 9.24-9.44 (fp16), 9.44-9.52 (bf16); 32x64x128 s4 three per SM in 4
//   splits (384 blocks) 8.76, four per SM in 5 splits 8.96 / 9.39.
// Sweep cs, twice each, v46 against v45: M = 16 fp16 6.73 / 6.70 against
// 7.57 / 7.54, bf16 7.03 / 7.06 against 7.68 / 7.68; M = 32 fp16 8.75 /
// 8.73 against 9.28 / 9.26, bf16 8.76 / 8.78 against 9.51 / 9.47 (M = 12
// and 24 alike); 5120 x 4096 at 16 tokens 6.32 / 6.27 against 7.23 / 7.17.
// The 16-token half tile lost where other tiles are planned in as many
// splits (4096 x 4096, 4096 x 14336, 8192 x 8192; sweep cr), and tied or
// gained 2-3% there in fewer (sweep cw, decode-notes v89), so the rule
// takes only these two tiles, with 4-bit weights and the scales the other
// decode rules take, and at 16 tokens at least 4 splits before (measured:
// 8 -> 4; an unsplit half tile is unmeasured). Planner v51 (sweep dh, twice):
// 8-bit weights with fp16 activations at 32 tokens too (HalvesWeights),
// 6144 x 4096 32x64x128 s4 three per SM in 4 splits against 32x128x128 s4
// in 5: uint8 10.84-10.87 µs against 11.71-11.75, e4m3 10.80-10.81 against
// 11.65-11.67.
std::optional<SplitTile> ThreePerSmHalfTile(const GemmTileConfig& tile,
                                            int64_t splits,
                                            const QuantSpec& spec,
                                            const LayerShape& shape,
                                            int sm_count, int smem_limit) {
  if (!IsPlainTwoWarpgroupTile(tile, spec, shape) || tile.stages != 4) {
    return std::nullopt;
  }
  const int64_t three_per_sm = int64_t{3} * sm_count;
  const int64_t k_tiles = shape.k / tile.block_k;
  const int64_t half_n_blocks = shape.n / 64;
  if (tile.block_m == 16 && tile.blocks_per_sm == 3 && splits >= 4 &&
      splits % 2 == 0 && k_tiles <= 4 * splits) {
    // The same blocks, each over twice the columns of half the rows
    // (OneWarpgroupHalfTile checks that 256 columns divide K).
    GemmTileConfig wide_k = tile;
    wide_k.block_k = 256;
    return HalfInSplits(wide_k, /*blocks_per_sm=*/3, splits / 2, spec, shape,
                        smem_limit);
  }
  if (tile.block_m == 32 && tile.blocks_per_sm == 0 && splits % 2 != 0) {
    // As many splits of at least 4 k-tiles as three per SM hold, where they
    // need the third block slot, stay as short as measured (8 k-tiles; the
    // half tile lost on long splits: ShortSplitHalfTile) and are fewer than
    // before: what the half tile saves is partials. In as many splits it
    // tied (sweep cs: 3584 x 3584, 7 splits of 4 k-tiles, 7.21 / 7.32 µs
    // against 7.17 / 7.21), in fewer it won (4608 x 3584, 7 -> 5 splits:
    // 7.55 / 7.56 against 8.09 / 8.01).
    const int64_t half_splits =
        std::min(three_per_sm / half_n_blocks, k_tiles / 4);
    const bool needs_third_slot =
        half_n_blocks * half_splits > int64_t{2} * sm_count;
    if (half_splits < 2 || half_splits >= splits || !needs_third_slot ||
        k_tiles > 8 * half_splits) {
      return std::nullopt;
    }
    return HalfInSplits(tile, /*blocks_per_sm=*/3, half_splits, spec, shape,
                        smem_limit);
  }
  return std::nullopt;
}

// Planner v51 (bench/decode-notes.md v92; sweep dh, twice in one call,
// bench/results/tile-sweep-dh-di-111313f.md): at 64 tokens the 8-bit
// pre-scaled tile 64x128x64 s6 (two per SM) in 8 splits of 8 k-tiles on
// 4096 x 4096 ran 12.84-12.85 µs (uint8) and 13.33 (e4m3) at M = 64 with
// early=1, 12.62-12.72 / 12.85-12.91 at M = 48; its 64-row half with
// 128-column k-tiles, 64x64x128 s4 pre-scaled two per SM in 4 splits (the
// same 256 blocks, half the partials), 10.60-10.61 / 10.37 and 10.47 /
// 10.16-10.19 (64x64x64 s6 with early=1 in 4 splits: 10.68-11.04). Where the
// splits are long it lost (4096 x 14336, 8 splits of 28 k-tiles: 26.2 /
// 25.7 against 25.8 / 24.3), and where the halved splits overfill two per SM
// (6144 x 4096 in 5 splits, three per SM in 4: 19.1 / 18.4 against 14.9 /
// 14.6). Measured with uint8 and e4m3 in groups of 128, fp16 scales and
// activations. Planner v74 (sweep fo, decode-notes v129, twice): uint8 with
// integer zero points, whose range tile fits five stages, not six, beside
// its zero windows: 64x128x64 s5 in 8 splits 13.37-13.56 / 14.06-14.12 µs at
// M = 33 / 64 against 10.31-10.32 / 10.90-10.93 for the half (0.76-0.78x);
// other scales with zero points take it as they take the six-stage rule.
std::optional<SplitTile> ShortSplitPrescaledHalfTile(const GemmTileConfig& tile,
                                                     int64_t splits,
                                                     const QuantSpec& spec,
                                                     const LayerShape& shape,
                                                     int smem_limit) {
  const bool prescaled_range_tile =
      tile.mma == GemmMma::kWgmma && tile.block_m == 64 &&
      tile.block_n == 128 && tile.block_k == 64 && tile.warps_m == 1 &&
      tile.warps_n == 8 &&
      (tile.stages == 6 ||
       (tile.stages == 5 && spec.zero_point == ZeroPointKind::kInteger)) &&
      tile.prescaled_scales && tile.warp_split_k == 1 &&
      tile.blocks_per_sm == 0 && !tile.k_major_scales && !tile.bulk_weights &&
      !tile.warp_run_weights;
  if (!prescaled_range_tile || spec.weight.bits != 8 ||
      spec.activation_type != DataType::kFp16 ||
      HasUnmeasuredFineScales(spec) || splits < 4 || splits % 2 != 0 ||
      shape.k > int64_t{8} * tile.block_k * splits) {
    return std::nullopt;
  }
  GemmTileConfig wide_k = tile;
  wide_k.block_k = 128;
  wide_k.stages = 4;
  wide_k.early_tiles = 0;
  return HalfInSplits(wide_k, /*blocks_per_sm=*/0, splits / 2, spec, shape,
                      smem_limit);
}

// Planner v52 (bench/decode-notes.md v93; sweeps dh and dj, twice each,
// bench/results/tile-sweep-dh-di-111313f.md, tile-sweep-dj-a11c8e4.md): the
// 8-bit 128-row tiles 16x128x128 / 32x128x128 s4, two per SM, in 8-9 splits
// of 10-16 k-tiles against their 64-row halves three per SM in 6-7 splits
// (uint8 / e4m3, M = 16 and 32):
// - 4096 x 14336 (8 -> 6): 17.35-17.41 / 17.31-17.33 µs against 18.05-18.13
//   / 17.88-17.92 at 16 tokens, 19.21-19.29 / 19.07-19.18 against
//   20.33-20.46 / 20.26-20.35 at 32;
// - 4096 x 11008 (8 -> 6): 14.26-14.28 / 14.24 against 14.65-14.67 /
//   14.55-14.59; 16.00-16.01 / 15.92-16.01 against 16.89-17.02 / 16.88-16.90;
// - 3584 x 18944 (9 -> 7): 20.07-20.08 / 20.06-20.24 against 20.76-20.82 /
//   20.79-20.81; 22.25-22.28 / 22.25 against 23.82-23.83 / 23.84-23.97.
// Where the plan ran fewer splits it tied or lost: 5120 x 13824 (6 -> 4)
// 0.99-1.03x, 8192 x 8192 (4 -> 3) 1.03-1.06x. Measured with groups of 128,
// fp16 scales and activations.
std::optional<SplitTile> EightBitLongSplitHalfTile(
    const GemmTileConfig& tile, int64_t splits, const QuantSpec& spec,
    const LayerShape& shape, int sm_count, int smem_limit) {
  const bool plain_tile = IsPlainTwoWarpgroupShape(tile) &&
                          (tile.block_m == 16 || tile.block_m == 32) &&
                          tile.stages == 4 && tile.blocks_per_sm == 0;
  if (!plain_tile || spec.weight.bits != 8 ||
      spec.activation_type != DataType::kFp16 ||
      HasUnmeasuredFineScales(spec) || splits < 8) {
    return std::nullopt;
  }
  // Long splits only (short ones are ShortSplitHalfTile's), so the fewer
  // splits that three per SM hold are still at least 4 k-tiles long.
  if (shape.k <= 4 * tile.block_k * splits) return std::nullopt;
  const int64_t half_n_blocks = shape.n / 64;
  const int64_t half_splits = int64_t{3} * sm_count / half_n_blocks;
  if (half_splits >= splits ||
      half_n_blocks * half_splits <= int64_t{2} * sm_count) {
    return std::nullopt;
  }
  return HalfInSplits(tile, /*blocks_per_sm=*/3, half_splits, spec, shape,
                      smem_limit);
}

}  // namespace hummingd
