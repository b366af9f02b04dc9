#include "kernels/gemm_decode_tile_options.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "gemm/wgmma_config.cuh"
#include "kernels/gemm_decode_rules.h"
#include "kernels/gemm_decode_sixteen_warps.h"

namespace hummingd {
namespace {

// The k-tiles of a block of `tile` in `splits` split-K slices: split-K's
// ranges differ by one k-tile, so a rule on a block's k-tiles holds for the
// fewest and the most.
struct SplitTiles {
  int64_t fewest;
  int64_t most;
};

SplitTiles TilesPerSplit(const GemmTileConfig& tile, int64_t splits,
                         const LayerShape& shape) {
  const int64_t k_tiles = shape.k / tile.block_k;
  return {k_tiles / splits, (k_tiles + splits - 1) / splits};
}

// The 8-token k-split tile of 32 rows (planner v19 on): four warps per
// 16-row n-unit, 1024-column k-tiles.
bool IsKSplit32RowTile(const GemmTileConfig& tile) {
  return tile.block_m == 8 && tile.block_n == 32 && tile.block_k == 1024 &&
         tile.warp_split_k == 4;
}

// The 16-token k-split tile of 32 rows in sixteen warps, one per SM
// (planner v24): two warps per 16-row n-unit, 1024-column k-tiles.
bool IsSixteenWarpKSplit16TokenTile(const GemmTileConfig& tile) {
  return tile.block_m == 16 && tile.block_n == 32 && tile.block_k == 1024 &&
         tile.warp_split_k == 8;
}

// The 64-row, one-warpgroup half tile at 8 tokens, four per SM
// (OneWarpgroupHalfTile in gemm_decode_rules.h, planner v34).
bool IsHalfTileFourPerSm(const GemmTileConfig& tile) {
  return tile.block_m == 8 && tile.block_n == 64 && tile.block_k == 256 &&
         tile.warps_n == 4 && tile.stages == 4 && tile.blocks_per_sm == 4 &&
         tile.warp_split_k == 1;
}

// The 16-token tile of 128 rows and 256-column k-tiles, one warpgroup
// without k-split warps.
bool IsWide16TokenTile(const GemmTileConfig& tile) {
  return tile.block_m == 16 && tile.block_n == 128 && tile.block_k == 256 &&
         tile.warp_split_k == 1;
}

// The sixteen-warp 64-token tile's early=1 (planner v67) was measured over
// splits of 56 and 64 k-tiles.
constexpr int64_t kSixteenWarpEarlyMinTilesPerSplit = 56;

}  // namespace

// early=1 (planners v38-v42, bench/decode-notes.md v83, v84): the prologue
// fetches only its first tile's weights before the previous kernel
// completes, so that the first tile's activations, issued at the release,
// queue behind one tile's weights instead of all the ring's lead.
// Measured with uint4 / uint8 / e4m3 in groups of 128
// (v38's rule also in the group table of 5d8f4e5: groups of 64 and
// channel-wise scales on 8192 x 8192, 0.95-1.00x); the other formats and
// scale layouts that take the same tiles extrapolate.
//  - v38 / v39: 4-bit weights on 8x32x1024 ksplit=4 and 16x128x256 over
//    blocks of 7-8 k-tiles, the whole range: 8192 x 8192 at M = 1-8 (fp16
//    0.96-0.99x, bf16 0.96-0.98x) and M = 16 (fp16 0.99x, bf16 0.97-0.98x)
//    in three runs (bench/results/ab-v82-session31.md, tile-sweep-cd.md);
//    4096 x 14336 16x128x256 in 8 splits of 7 (bf16 0.98x, fp16 1.00x).
//    The same tiles lost over 28-32 k-tiles (the 28672-wide layers at 16
//    tokens, 1.01x; with fp16 still, but bf16 with k-major scales takes it
//    there since planner v67, below).
//  - v40: the 8-token k-split tiles on a three-stage ring with fp16
//    activations gain more the more tokens their tiles carry (sweep cg,
//    twice, bench/results/tile-sweep-cg.md): over blocks of 4 k-tiles from
//    M = 6 (4096 x 4096 uint8 / e4m3 8x16x1024 ksplit=8 at M = 6-8
//    0.96-0.97x, 3072 x 4096 0.97-1.00x from M = 7 and 0.99-1.00x at 6,
//    6144 x 4096 uint4 8x32x1024 ksplit=4 0.97-0.98x; at M = 1 the same
//    tiles lost 1-5%), and with
//    8-bit weights over blocks of 2 (4096 x 2048) at every M (0.92-0.99x);
//    4-bit weights over blocks of 2 from M = 6 (6144 x 2048 at M = 6 / 8
//    0.95-0.96x, sweep cj). Blocks of 3 are unmeasured and take the rule of
//    4; blocks of 1 keep the tile without it. Not with bf16 activations
//    (6144 x 4096 1.00-1.04x at every M), nor on the four-stage 4-bit
//    8x16x1024 (4096 x 4096 0.99-1.03x), 5 k-tiles (4096 x 5120 8-bit
//    0.99-1.04x, sweep cj) or 14 (4096 x 14336 8-bit 0.98-1.00x).
//  - v40: the 64-token pre-scaled tile (64x128x64 scales=pre, six stages)
//    over splits of 8-16 k-tiles, the whole range: 4096 x 4096 e4m3
//    0.96-0.99x and uint8 0.97-0.99x (8 k-tiles), 6144 x 4096 e4m3
//    0.95-0.96x (12-13; uint8 1.00x there), 4096 x 8192 0.95-0.98x (16) at
//    M = 33 / 48 / 64 (sweeps ce, cg, cj). Shorter and longer splits lost
//    or tied: 6 (4096 x 3072: e4m3 1.03-1.06x, uint8 1.00-1.01x), 26
//    (6144 x 8192: e4m3 1.03-1.04x, uint8 1.01x), 28 (4096 x 14336: uint8
//    0.98x but e4m3 1.00-1.02x). bf16 activations, unmeasured, keep the
//    tile without it.
std::optional<int64_t> EarlyFirstTileFrom(const GemmTileConfig& tile,
                                          int64_t splits, const QuantSpec& spec,
                                          const LayerShape& shape,
                                          int64_t m_min) {
  const SplitTiles blocks = TilesPerSplit(tile, splits, shape);
  const int64_t fewest = blocks.fewest;
  const int64_t most = blocks.most;
  const int lead = device::wgmma_ring_lead(tile.stages, tile.warp_split_k);
  if (lead < 2) return std::nullopt;
  const bool k_split_tile = IsKSplit32RowTile(tile);
  if (spec.weight.bits == 4 && (k_split_tile || IsWide16TokenTile(tile)) &&
      fewest >= 7 && most <= 8) {
    return m_min;
  }
  // Warpgroup slices (planner v57, sweep dw: 8192 x 8192 0.98-1.00x at 16
  // and 32 tokens against early=0, fp16 and bf16; planner v64's 8-bit
  // two-warpgroup slices, sweep et: 0.97-0.98x on 6144 x 4096).
  if (device::wgmma_warpgroup_slices(tile.block_m, tile.block_n,
                                     tile.warp_split_k)) {
    return m_min;
  }
  // The 16-token sixteen-warp tile (planner v24) over blocks its ring holds
  // whole (K <= 4096 in 1024-column tiles, four stages; planner v58, sweep
  // ec2): with a compile-time K that fits, early=1 lets the prologue copy
  // every tile (gemm/wgmma_config.cuh, kWholeKInRing). 4096 x 4096 against
  // early=0 and the ring's lead: fp16 M = 9 / 12 / 16 0.93 / 0.95 / 0.99x,
  // bf16 0.93 / 0.97 / 0.985x (groups of 128). Groups of 32, and of 64 with
  // fp32 scales, whose scale chunk spans fewer tiles than K, take early=1
  // at the ring's lead, unmeasured (fp16 groups of 128 at that lead:
  // 0.96-0.98x).
  if (IsSixteenWarpKSplit16TokenTile(tile) && most <= tile.stages) {
    return m_min;
  }
  // Its three-stage form for 8-bit weights on long K (planner v59, sweep
  // ed: 4096 x 14336 uint8 / e4m3 0.975x against early=0).
  if (IsSixteenWarpKSplit16TokenTile(tile) && spec.weight.bits == 8 &&
      tile.stages == 3) {
    return m_min;
  }
  // The sixteen-warp pre-scaled 64-token tile (planners v49 / v50,
  // gemm_decode_sixteen_warps.cc; planner v67, sweeps ew and ex, twice
  // each, decode-notes v113) over splits of 56 k-tiles or more: 28672 x
  // 8192 unsplit (64 k-tiles) and 8192 x 28672 in 4 splits of 56, M = 33 /
  // 48 / 64, against early=0: uint8 with fp16 activations 0.992-0.998x (M =
  // 64 76.41-76.42 µs against 76.57-76.92), e4m3 0.994-1.001x, uint8 with
  // bf16 activations 0.991-1.001x; it never lost more than 0.1%. On splits
  // of 32 k-tiles, which the tile also takes, it tied (planner v68, sweep
  // ez, decode-notes v115: 12288 x 8192 and 16384 x 8192 in two, 10240 x
  // 12288 in three, uint8 / e4m3 0.995-1.004x), so those and the unmeasured
  // 33-55 keep the tile without it; the other 8-bit formats and scale
  // layouts the tile takes (e4m3 with bf16, int8, zero points, channel-wise
  // or fp32 scales) extrapolate, as v38's do.
  if (IsSixteenWarpPrescaledTile(tile) &&
      fewest >= kSixteenWarpEarlyMinTilesPerSplit) {
    return m_min;
  }
  // The 16-token 128-row 256-column tile with k-major scales (planner v61's
  // long splits) and bf16 activations over splits of 28-32 k-tiles
  // (planner v67, sweeps ew and ex): 28672 x 8192 unsplit (32 k-tiles) M =
  // 12 / 16 0.992-1.000x (M = 16 36.27-36.32 µs against 36.30-36.36 in ex),
  // 8192 x 28672 in 4 splits of 28 0.992-0.996x. With fp16 activations it
  // lost on both layers (1.007-1.013x), as v38's rule did there without
  // k-major scales; why the two activation types part is not known. Longer
  // splits (the tile's k-major rule reaches any split of 28 or more) are
  // unmeasured and keep it without.
  if (IsWide16TokenTile(tile) && tile.k_major_scales &&
      spec.activation_type == DataType::kBf16 && fewest >= 28 && most <= 32) {
    return m_min;
  }
  // Only fp16 activations were measured with the v40 rules.
  if (spec.activation_type != DataType::kFp16) return std::nullopt;
  const bool three_stage_k_split_tile =
      tile.block_m == 8 && tile.warp_split_k > 1 && tile.stages == 3;
  if (three_stage_k_split_tile && fewest >= 2) {
    if (most <= 2 && spec.weight.bits == 8) return m_min;
    if (most <= 4) return std::max<int64_t>(m_min, 6);
  }
  const bool prescaled_64_token_tile =
      tile.block_m == 64 && tile.prescaled_scales && tile.stages == 6;
  if (prescaled_64_token_tile && fewest >= 8 && most <= 16) {
    return m_min;
  }
  return std::nullopt;
}

// copy=bulk (planner v43, bench/decode-notes.md v86): the weights of a stage
// by one cp.async.bulk per 16-row run (issued by four threads of the 64-row
// half tile) on the stage's mbarrier, instead of four 16-byte cp.async per
// thread. Measured on the half tile, 4-bit weights in groups of 128, 8
// splits (sweeps ck, cl and cm, bench/results/tile-sweep-ck-cn.md): with fp16
// activations over blocks of 6-7 k-tiles 0.96-0.99x at M = 1-8 (4096 x
// 14336, 7: 9.42-9.53 µs against 9.62-9.89 in three runs; 4096 x 12288, 6:
// 0.97-0.99x in three), but 1.02-1.05x over blocks of 4-6 (4096 x 9728, 4096 x
// 11008) and 1.05-1.13x with bf16 activations on both layers measured
// (4096 x 14336, 4096 x 11008). The k-split tiles, the 16- to 64-token tiles
// and the pre-scaled 64-token tile lost with it or tied (sweep ck:
// 0.99-1.17x); finer scale groups (larger scale chunks beside the weights)
// are unmeasured and keep cp.async. The other 4-bit formats and scale types
// on the same tile (channel-wise or fp32 scales, zero points) extrapolate,
// as early=N's rules do. All of it was measured in the bench's back-to-back
// replays of one layer: in an isolated launch bulk copies ran ~2.5% behind
// cp.async for fp16 too (ncu profiles cb, bench/results/ncu-cb-0192d92.md),
// so the gain lies in how consecutive launches overlap; behind a different
// kernel it is unmeasured.
bool BulkWeightsWin(const GemmTileConfig& tile, int64_t splits,
                    const QuantSpec& spec, const LayerShape& shape) {
  return IsHalfTileFourPerSm(tile) && spec.weight.bits == 4 &&
         spec.activation_type == DataType::kFp16 && !HasFineScales(spec) &&
         TilesPerSplit(tile, splits, shape).fewest >= 6;
}

// copy=warprun (planner v43, bench/decode-notes.md v76, v77, v86): each
// warp's weight chunks of a stage are consecutive 512-byte pieces of one
// run, so a thread's copies share one pointer and one shared offset (fewer
// address instructions per k-tile). Measured on the 8-token k-split tile of
// 32 rows: with bf16 activations over blocks of 8 k-tiles (8192 x 8192,
// where v38's rule gives early=1) 0.979-0.993x at M = 1 / 4 / 8 in two A/Bs
// of session 33 (bench/results/ab-v76k-session33.md) and 0.988-0.994x in
// v77, but 1.005-1.015x over blocks of 4 (6144 x 4096); with fp16
// activations it tied (8192 x 8192 0.993-1.003x) or moved both ways (6144 x
// 4096 0.985-1.009x), and the 64-row half tile lost with it (v77:
// 1.00-1.01x). So bf16 on the k-split tile over the blocks v38's rule names
// (7-8 k-tiles; 7 unmeasured). Measured with uint4 in groups of 128; the
// other 4-bit specs on the same tile (zero points, int4, other groups)
// extrapolate, as early=N's rules do.
bool WarpRunWeightsWin(const GemmTileConfig& tile, int64_t splits,
                       const QuantSpec& spec, const LayerShape& shape) {
  const SplitTiles blocks = TilesPerSplit(tile, splits, shape);
  return IsKSplit32RowTile(tile) && spec.weight.bits == 4 &&
         spec.activation_type == DataType::kBf16 && blocks.fewest >= 7 &&
         blocks.most <= 8 && WgmmaTakesWarpRunWeights(tile, spec);
}

// Planner v61 (sweeps el, em, twice each; decode-notes v108): k-major
// scales against the same tile and splits, uint4 in groups of 128 with
// fp16 scales and activations or bf16 ones. The 128-row 256-column tiles on
// long splits: 28672 x 8192 unsplit (32 k-tiles) 16x128x256 s4 M = 16 fp16
// 32.57-33.12 us against 33.09-33.65, bf16 35.97-36.18 against 36.44-36.95
// (0.973-0.989x; M = 12 alike), 32x128x256 s3 M = 32 0.985-0.991x; 8192 x
// 28672 in 4 splits of 28 0.986-0.99x at M = 16. The 32-token warpgroup
// k-slices: 8192 x 28672 (56 k-tiles) fp16 39.75-39.78 against 40.69-40.78,
// bf16 0.98x; 8192 x 8192 (16) fp16 0.98x, bf16 0.99-1.0x. Short splits of
// the 128-row tiles lost: 4096 x 14336 in 8 splits of 7 k-tiles 1.001-1.015x
// (16 and 32 tokens). The slices over 8 k-tiles (6144 / 7168 / 5120 x 4096)
// gained ~1% (0.985-1.0x) and are left out: the bound stays where both
// activation types gained. The 16-token slices lost on 8192 x 8192
// (1.01-1.015x), as did 4096 x 4096's 32-row sixteen-warp tile (fp16
// 1.01-1.03x). Taken unmeasured: the slices over 16 k-tiles on v60's
// partial fills (6144 x 8192 and the like), the slices without early=1 (a
// client of launch ABI 2-4), 32x128x256 in splits (8192 x 28672 for a client
// without k-split tiles), other SM counts; not taken: other specs, mixed
// scale and activation types, grids past one wave. The price is the layer's
// transposed scale copy (QuantizedLinear keeps it where a kernel up to its
// max_m reads it): as large as the scales, 1/32 of 4-bit weights in groups
// of 128.
bool KMajorScalesOnLongSplitsWin(const GemmTileConfig& tile, int64_t splits,
                                 const QuantSpec& spec, const LayerShape& shape,
                                 int sm_count) {
  if (tile.mma != GemmMma::kWgmma || !IsMeasuredFourBitGroupSpec(spec) ||
      spec.granularity != ScaleGranularity::kGroup || spec.group_size != 128 ||
      spec.scale_type != spec.activation_type) {
    return false;
  }
  // One wave, as measured (layers wider than a wave run the 16 KB k-tile
  // tiles of gemm_decode_plan.cc unsplit, unmeasured with k-major scales).
  const int64_t blocks = shape.n / tile.block_n * splits;
  if (blocks > int64_t{WgmmaBlocksPerSm(tile)} * sm_count) return false;
  const int64_t fewest_tiles = TilesPerSplit(tile, splits, shape).fewest;
  const bool long_split_128_row_tile =
      tile.block_n == 128 && tile.warps_n == 8 && tile.block_k == 256 &&
      tile.warp_split_k == 1 && (tile.block_m == 16 || tile.block_m == 32) &&
      fewest_tiles >= 28;
  const bool long_32_token_slices =
      tile.block_m == 32 &&
      device::wgmma_warpgroup_slices(tile.block_m, tile.block_n,
                                     tile.warp_split_k) &&
      fewest_tiles >= 16;
  return (long_split_128_row_tile || long_32_token_slices) &&
         TileCanReadKMajorScales(tile, spec, shape.k);
}

// scales=pre on groups of 32 and 64 at 33-64 tokens (planner v70, sweep fh,
// bench/results/tile-sweep-fh-6840307-run{1,2}.txt, decode-notes v122, twice
// in one call): their deferred scales fold every two k16 steps, each fold
// draining the wgmma pipe (gemm/wgmma_tile_compute.cuh), where groups of 128
// fold every eight. The plans' tiles and splits with pre-scaled operands
// against the same deferred, M = 33 / 48 / 64, fp16 and bf16: 64x128x128 s4
// on 8192 x 8192 0.87-0.89x (M = 64 fp16 23.16-23.37 µs against
// 26.41-26.60), 28672 x 8192 0.82-0.85x, 8192 x 28672 0.83-0.89x, 6144 x 4096
// 0.88-0.90x, 4096 x 14336 0.88-0.89x; its 64-row half (64x64x128 s4, 4096 x
// 4096 in 4 splits) 0.89-0.92x; 128 (130) registers, no spills. Groups of
// 64 (a fold every four steps) since planner v71, sweeps fi and fj
// (bench/results/tile-sweep-f{i,j}-*-run{1,2}.txt, decode-notes v123 / v124,
// M = 33 / 64, twice each): fp16 0.98-0.99x on 8192 x 8192, 0.98x on 4096 x
// 4096, 0.96-0.97x on 28672 x 8192, 0.96-1.00x on 8192 x 28672, 0.94-0.95x on
// 6144 x 4096, 0.99x on 4096 x 14336; bf16 0.96-0.97x on 8192 x 8192,
// 0.94-0.95x on 28672 x 8192, 0.95-0.98x on 8192 x 28672, 0.96-0.97x on 6144 x
// 4096 and 4096 x 14336, but on the half tile (4096 x 4096) 1.01-1.03x at M =
// 33 and 0.99x at 64, so bf16 in groups of 64 keeps the half tile deferred.
// Only those two tiles (128-column k-tiles, four stages) and the specs measured
// (uint4 with 16-bit scales, no zero points: IsMeasuredFourBitGroupSpec; in
// other specs the decoder may scale every pair anyway; zero points below). In
// groups of 128, 4-bit weights lost with it at 32 and 64 tokens on five of six
// layers (gemm_decode_plan.cc's 64-token rule). The k-major check keeps the
// predicate to what was measured; the planner sets k-major scales after it.
// The 32-token warpgroup k-slices in groups of 32 (planner v69, sweep ff,
// decode-notes v121; gemm_decode_ksplit.cc plans those slices only where the
// grid fills a wave): pre-scaled 0.85x / 0.88x (fp16 / bf16) on 8192 x 8192
// against 0.91-0.95x deferred.
// Integer zero points (planner v73, sweep fm, bench/results/
// tile-sweep-fm-430fa53-run{1,2}.txt, decode-notes v127, twice in one call):
// their 64-token plans run 64x128x128 in three stages (the zero-point
// windows), and there, with fp16, groups of 32 won pre-scaled: 0.92-0.93x on
// 8192 x 8192 (M = 64 26.98-27.05 µs against 28.99-29.27), 0.95x on 6144 x
// 4096. Groups of 64 ran 0.98x on 8192 x 8192 and 1.00-1.01x on 6144 x 4096,
// groups of 128 1.05-1.10x on five layers (a tie on 4096 x 4096's half tile),
// bf16 in groups of 128 1.05x: those stay deferred, as does what ran neither
// way (bf16 in groups of 32, the half tile in three stages).
bool PrescaledScalesWin(const GemmTileConfig& tile, const QuantSpec& spec) {
  const bool slices_32_tokens =
      tile.block_m == 32 && device::wgmma_warpgroup_slices(
                                tile.block_m, tile.block_n, tile.warp_split_k);
  if (slices_32_tokens) {
    return IsMeasuredFourBitGroupSpec(spec) && HasGroupsOf32(spec) &&
           !tile.k_major_scales;
  }
  // The 64-token wgmma tiles of 128-column k-tiles the sweeps ran: two
  // warpgroups or the one-warpgroup half, row-windowed scales.
  const bool sixty_four_token_tile =
      tile.mma == GemmMma::kWgmma && tile.block_m == 64 &&
      tile.block_k == 128 && !tile.k_major_scales;
  const bool two_warpgroups = tile.block_n == 128 && tile.warps_n == 8;
  const bool half_tile = tile.block_n == 64 && tile.warps_n == 4;
  if (IsFp16Uint4ZeroPointGroupsOf32Spec(spec)) {
    // The half tile in four stages since planner v74 (sweep fo: 10.13-10.15
    // / 10.63-10.65 µs pre-scaled at M = 33 / 64 on 4096 x 4096 against
    // 11.30 / 11.64-11.65 deferred).
    return sixty_four_token_tile && ((two_warpgroups && tile.stages == 3) ||
                                     (half_tile && tile.stages == 4));
  }
  const bool measured_spec =
      IsMeasuredFourBitGroupSpec(spec) && HasGroupRulesFineScales(spec);
  const bool bf16_groups_of_64_on_half_tile =
      half_tile && !HasGroupsOf32(spec) &&
      spec.activation_type == DataType::kBf16;
  return sixty_four_token_tile && tile.stages == 4 &&
         (two_warpgroups || half_tile) && measured_spec &&
         !bf16_groups_of_64_on_half_tile;
}

// Planner v77 (sweep fr, bench/results/tile-sweep-fr-51b4533-run{1,2}.txt,
// decode-notes v132, twice in one call): fp16 6144 x 4096 at 33-64 tokens
// was the one layer whose 64x128x128 s4 plan ran faster pre-scaled in groups
// of 128 (0.93-0.95x in sweep fk, where five other layers ran 1.00-1.04x),
// and the one whose splits are unequal: 32 k-tiles in 5 splits of 6 or 7.
// Sweep fr ran the tile both ways at 4 and 5 splits: pre-scaled in 5 splits
// 11.89-11.94 / 12.64-12.68 µs at M = 33 / 64 against the plan's deferred
// 12.53 / 13.39-13.50 (0.94-0.95x); in 4 equal splits pre-scaled lost
// (12.77-12.78 / 13.47-13.52 against 12.24-12.29 / 13.01-13.06 deferred, as
// fk found on the even layers), and deferred in 4 splits (0.97-0.98x of the
// plan) stays behind pre-scaled in 5. bf16 tied pre-scaled in 5 splits
// (11.95-12.10 / 12.77-12.79 against 12.07-12.10 / 12.79-12.86) and stays
// deferred. Taken only where measured: uint4 in groups of 128 with fp16
// scales and activations (IsMeasuredFourBitGroupSpec), the two-warpgroup
// 64-token tile in four stages, row-windowed scales, splits of unequal
// length; among the fifteen layers the planner tests run, only 6144 x 4096.
bool PrescaledOnUnevenSplitsWin(const GemmTileConfig& tile, int64_t splits,
                                const QuantSpec& spec,
                                const LayerShape& shape) {
  if (!IsMeasuredFourBitGroupSpec(spec) ||
      spec.granularity != ScaleGranularity::kGroup || spec.group_size != 128 ||
      spec.activation_type != DataType::kFp16 ||
      spec.scale_type != DataType::kFp16) {
    return false;
  }
  const bool two_warpgroup_64_token_tile =
      tile.mma == GemmMma::kWgmma && tile.block_m == 64 &&
      tile.block_n == 128 && tile.warps_n == 8 && tile.block_k == 128 &&
      tile.stages == 4 && tile.warp_split_k == 1 && !tile.k_major_scales;
  // One split (or none) has no unequal splits; checked before dividing.
  if (!two_warpgroup_64_token_tile || splits <= 1) return false;
  const SplitTiles blocks = TilesPerSplit(tile, splits, shape);
  return blocks.fewest != blocks.most;
}

}  // namespace hummingd
