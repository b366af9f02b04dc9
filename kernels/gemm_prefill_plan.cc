#include "kernels/gemm_prefill_plan.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/gemm_config.h"
#include "kernels/gemm_decode_plan.h"
#include "kernels/launch_abi.h"

namespace hummingd {
namespace {

struct PrefillRange {
  int64_t m_min;
  int64_t m_max;
};

// The ranges are planned in steps of 64 tokens up to kLastStepM (then one
// open range), and neighbours that plan the same kernel and launch merge:
// within a step none of the 64-, 128- and 256-token grids changes, so the
// choice between them (BusiestSmWork) holds for every M of it; it and the
// split-K factor are judged at the step's largest M (the split's partial
// traffic grows with M, so a smaller M of a step might split more). The
// open range above kLastStepM is judged at M = kOpenRangeM.
constexpr int64_t kFirstPrefillM = 65;
constexpr int64_t kStepM = 64;
constexpr int64_t kLastStepM = 2048;
// Whole blocks in every grid (64-, 128- and 256-token), and waves enough
// that the grids' work per SM differs by the tiles' speed rather than by a
// last wave (at 2176, planner v32's point, the 256-token grid carries a
// half-empty block and lost on 8192 x 8192, which it wins by 10% at 4096
// and 8192, sweep bj); also where the one- and two-n-block layers still
// leave most SMs idle, so the smaller tiles keep them. For clients of
// launch ABI 3 it plans the open range of v32 on the six layers
// (and on N = 128 to 14336 in eight specs, but for some of 3 to 5 n-blocks:
// N = 384 now takes the 128-token tile, N = 640 the 64-token one; neither
// was timed above 2048).
constexpr int64_t kOpenRangeM = 4096;

// 128-token tiles may be planned from this M on (not measured below 200),
// in grouped block order from kGroupedOrderMinM (sweeps be-bg, 128-token
// tiles: at M = 1024 231.5 against 239.9 µs on 8192 x 8192, 927.5 against
// 944.5 on 28672 x 8192, 903 / 919 on 8192 x 28672, 91.8 / 93.3 on
// 6144 x 4096, 199.9 / 201.5 on 4096 x 14336; at 2048 495 against 539; not
// timed between 513 and 896).
constexpr int64_t kTokens128MinM = 129;
constexpr int64_t kGroupedOrderMinM = 513;
// 256-token tiles from the step that holds M = 1000 and 1024, the smallest
// measured (sweep bj).
constexpr int64_t kTokens256MinM = 961;

// The 128-row tile (one 64-row block per warpgroup, two warpgroups, 4
// stages of 128 columns) or the 256-row one (four warpgroups, 3 stages, one
// block per SM).
GemmTileConfig PrefillTile(bool rows_256) {
  GemmTileConfig tile;
  tile.mma = GemmMma::kWgmma;
  tile.block_m = 64;
  tile.warps_m = 1;
  tile.warps_n = rows_256 ? 16 : 8;
  tile.block_n = rows_256 ? 256 : 128;
  tile.block_k = 128;
  tile.stages = rows_256 ? 3 : 4;
  return tile;
}

// The 128-token tile: two warpgroups, each one 64-row block by all 128
// tokens (64 fp32 accumulators per thread, so one block per SM), 4 stages
// of 128 columns, or of 64 where those do not fit `smem_limit`. Sweep be
// (bench/results/tile-sweep-prefill-be-acc4d05.md, uint4 fp16): against
// the 64-token tiles M = 1024 240 / 944 / 60.1 µs for 8192 x 8192,
// 28672 x 8192 and 4096 x 4096 (254 / 1016 / 65.8); at M = 8192 in grouped
// order 2097 / 7413 / 547 (2486 / 8961 / 646), where the 64-token tile in
// grouped order took 2234 / 7803 / 576. Columns of 64 ran 4-8% slower at
// M >= 1024 with 4-bit weights (with uint8 at M = 1024 2% faster, at 8192
// 5% slower). At M = 256 (sweeps be, bg) it won where its grid fits one wave
// (8192 x 8192 57.7 against 64.6; 6144 x 4096 30.7 / 34.3; 4096 x 14336 in
// two splits 56.0 / 60.4), tied on 4096 x 4096 in two splits (21.20 against
// 21.11) and lost on 28672 x 8192 (237 against 230).
GemmTileConfig Tokens128Tile(const QuantSpec& spec, int smem_limit,
                             bool grouped_order) {
  GemmTileConfig tile =
      WgmmaTwoWarpgroupTile(128, /*block_k=*/128, /*stages=*/4);
  tile.grouped_order = grouped_order;
  if (tile.SharedBytes(spec) > smem_limit) tile.block_k = 64;
  return tile;
}

// The 256-token tile: the 128-token one with 64x256x16 wgmmas (128 fp32
// accumulators per thread), so each decoded weight feeds twice the tokens;
// 3 stages of 128 columns, or up to 6 of 64 where those do not fit
// `smem_limit`; always in grouped block order. Sweep bj
// (bench/results/tile-sweep-prefill-bi-bj.md): against the 128-token tile in
// grouped order, 8192 x 8192 uint4 fp16 M = 1024 / 4096 / 8192 199.0 /
// 911 / 1836 µs (222.2 / 1017 / 2051), bf16 at 4096 / 8192 870 / 1758
// (1004 / 2023); 64-column stages, 5 of them: uint8 1010 / 2007 (1158 /
// 2339), e4m3 989 / 1976 (1102 / 2207); 28672 x 8192 at 4096 3244 (3542),
// 4096 x 4096 209.0 (232.9). In launch order it lost 3-9% at 4096 / 8192
// (937 / 1994), and 64-column stages cost 4-bit weights 1.7-3.8%.
GemmTileConfig Tokens256Tile(const QuantSpec& spec, int smem_limit) {
  GemmTileConfig tile =
      WgmmaTwoWarpgroupTile(256, /*block_k=*/128, /*stages=*/3);
  tile.grouped_order = true;
  if (tile.SharedBytes(spec) > smem_limit) {
    tile.block_k = 64;
    tile.stages = 6;
    while (tile.stages > 3 && tile.SharedBytes(spec) > smem_limit) {
      --tile.stages;
    }
  }
  return tile;
}

// Blocks of `tile` an SM holds: the stub's launch bounds cap the registers
// at WgmmaBlocksPerSm's count, and MakeGemmPlanEntry only ever pads the
// shared-memory request up to that count, so shared memory decides the
// rest (registers counted as 0: the cap already holds them).
// At least 1: callers check the shared-memory fit before the tile runs.
int PrefillBlocksPerSm(const GemmTileConfig& tile, const QuantSpec& spec) {
  return std::max(
      1, std::min(WgmmaBlocksPerSm(tile),
                  Sm90ResidentBlocks(tile.Threads(), /*registers_per_thread=*/0,
                                     tile.SharedBytes(spec))));
}

// Sweeps ba and bb (bench/results/tile-sweep-prefill-a0b7394.md): the
// 256-row tile won at M = 8192 on all six layers (8192 x 8192 2437 against
// 2712 µs; 4096 x 14336 2091 / 2384) and tied or lost below against a
// 128-row tile two per SM (28672 x 8192 at M = 256: 262 against 227; at
// M = 1024 from 5% slower to 6% faster). Where the 128-row tile holds one
// block per SM (8-bit weights: four 32 KB stages; also 4-bit weights with
// integer zero points, 32 bytes over two per SM), the 256-row tile won from
// M = 256 (e4m3 8192 x 8192 75.4 against 90.5 µs) and lost at M = 128 (75.2
// against 45.7); measured with 8-bit weights only.
bool TakesRows256(const PrefillRange& range, const QuantSpec& spec,
                  const LayerShape& shape) {
  if (shape.n % 256 != 0) return false;
  const bool narrow_alone = PrefillBlocksPerSm(PrefillTile(false), spec) == 1;
  return range.m_min > (narrow_alone ? 128 : 1024);
}

struct PrefillChoice {
  GemmTileConfig tile;
  int64_t splits = 1;
};

// `tile` split by ChooseSplitK at the range's largest M.
PrefillChoice SplitPrefillTile(const GemmTileConfig& tile,
                               const PrefillRange& range, const QuantSpec& spec,
                               const LayerShape& shape, int sm_count) {
  const int64_t m_blocks = (range.m_max + tile.block_m - 1) / tile.block_m;
  const int64_t blocks = m_blocks * (shape.n / tile.block_n);
  const double weight_bytes =
      static_cast<double>(shape.n) * shape.k * spec.weight.bits / 8.0;
  // Each split's fp32 partial of the whole output, written and read once.
  const double partial_bytes =
      2.0 * static_cast<double>(range.m_max) * shape.n * 4.0;
  // Measured at M = 128 and 256 (sweep bb): 4096 x 4096 in 4 and 2
  // splits 13.8 and 20.9 µs against 21.7 and 32.2 unsplit; 4096 x 14336
  // 33.3 and 59.8 against 82.0 and 107.1.
  const int64_t splits =
      ChooseSplitK(blocks, shape.k / tile.block_k,
                   int64_t{sm_count} * PrefillBlocksPerSm(tile, spec),
                   /*min_tiles_per_split=*/4, /*max_splits=*/16, partial_bytes,
                   weight_bytes);
  return PrefillChoice{tile, splits};
}

// The busiest SM's share of the grid at M = m, in tile elements (block_m x
// block_n per block, over the splits): the grid dealt out over the SMs,
// whatever number of blocks each holds at a time, since the blocks of one
// SM share its tensor cores and its share of the bandwidth.
double BusiestSmWork(const PrefillChoice& choice, int64_t m,
                     const LayerShape& shape, int sm_count) {
  const GemmTileConfig& tile = choice.tile;
  const int64_t blocks = (m + tile.block_m - 1) / tile.block_m *
                         (shape.n / tile.block_n) * choice.splits;
  const int64_t per_sm = (blocks + sm_count - 1) / sm_count;
  return static_cast<double>(per_sm) * tile.block_m * tile.block_n /
         static_cast<double>(choice.splits);
}

// The 128-token tile does the same work in ~0.9 of the time of the 64-token
// ones where both fill whole waves (sweeps bf, bg: 8192 x 8192 uint4 fp16
// M = 1024 229.7 against 254.4 µs, M = 512 116.5 / 127.3; 4096 x 4096 M =
// 512 30.4 / 33.6; e4m3 4096 x 4096 against the 256-row tile 0.84, uint4
// with zero points 0.89), and loses where its coarser grid leaves the
// busiest SM more of it: at M = 384 (8192 x 8192 115.9 against 98.9 µs:
// two 128-token blocks against three 64-token ones on the busiest SM) and
// on 6144 x 4096 at M = 512 (61.3 against 52.7). So it is planned where its
// busiest SM's work, times 0.9, is at most the 64-token grid's.
constexpr double kTokens128WorkRatio = 0.9;
// The 256-token tile against the 128-token one where both fill whole waves
// (sweep bj, the same work per SM: 0.86-0.92 of its time, median 0.895).
// Between 1025 and 2048 the steps then alternate by the waves each grid
// leaves; sweep bk timed 11 of them against the opposite tile: the planned
// one faster in 9 (by 1.5-19%), a tie, and 2% slower on 8192 x 8192 at
// M = 1280 (whose step's M = 1152 runs 8% faster as planned).
constexpr double kTokens256WorkRatio = 0.9;

// The entry for one range: the 64-token tile of planner v28, or the 128- or
// 256-token one where the client can launch it and BusiestSmWork, weighed
// by the work ratios above, favours it (a tie goes to the larger tile).
PrefillChoice ChoosePrefillTile(const PrefillRange& range,
                                const QuantSpec& spec, const LayerShape& shape,
                                int sm_count, int smem_limit,
                                uint32_t launch_abi) {
  const PrefillChoice narrow =
      SplitPrefillTile(PrefillTile(TakesRows256(range, spec, shape)), range,
                       spec, shape, sm_count);
  const GemmTileConfig tokens_128 =
      Tokens128Tile(spec, smem_limit, range.m_min >= kGroupedOrderMinM);
  // Whether `tile` may serve the range: from `min_m` on, for the client's
  // launch ABI, within the shared memory.
  auto usable = [&](const GemmTileConfig& tile, int64_t min_m) {
    return range.m_min >= min_m && GemmTileLaunchAbi(tile) <= launch_abi &&
           tile.SharedBytes(spec) <= smem_limit;
  };
  if (!usable(tokens_128, kTokens128MinM)) return narrow;
  const PrefillChoice wide =
      SplitPrefillTile(tokens_128, range, spec, shape, sm_count);
  // A step's largest M, or kOpenRangeM.
  const int64_t m = range.m_max <= kLastStepM ? range.m_max : kOpenRangeM;
  const double wide_cost =
      kTokens128WorkRatio * BusiestSmWork(wide, m, shape, sm_count);
  const double narrow_cost = BusiestSmWork(narrow, m, shape, sm_count);
  const PrefillChoice& best = wide_cost <= narrow_cost ? wide : narrow;
  const double best_cost = std::min(wide_cost, narrow_cost);
  const GemmTileConfig tokens_256 = Tokens256Tile(spec, smem_limit);
  if (!usable(tokens_256, kTokens256MinM)) return best;
  const PrefillChoice widest =
      SplitPrefillTile(tokens_256, range, spec, shape, sm_count);
  return kTokens256WorkRatio * kTokens128WorkRatio *
                     BusiestSmWork(widest, m, shape, sm_count) <=
                 best_cost
             ? widest
             : best;
}

}  // namespace

std::vector<PlanEntry> PlanWgmmaPrefill(const QuantSpec& spec,
                                        const LayerShape& shape, int sm_count,
                                        int smem_limit, uint32_t launch_abi) {
  std::vector<PlanEntry> entries;
  if (shape.n % 128 != 0 || shape.k % 128 != 0) return entries;
  std::vector<PrefillRange> ranges;
  for (int64_t m_min = kFirstPrefillM; m_min <= kLastStepM; m_min += kStepM) {
    ranges.push_back({m_min, m_min + kStepM - 1});
  }
  ranges.push_back({kLastStepM + 1, kDefaultMaxM});
  for (const PrefillRange& range : ranges) {
    const PrefillChoice choice =
        ChoosePrefillTile(range, spec, shape, sm_count, smem_limit, launch_abi);
    if (choice.tile.SharedBytes(spec) > smem_limit ||
        !ValidateGemmTile(choice.tile, shape.n, shape.k).ok()) {
      return {};
    }
    PlanEntry entry = MakeGemmPlanEntry(range.m_min, range.m_max, choice.tile,
                                        spec, shape, choice.splits, smem_limit);
    if (!entries.empty() && entries.back().config == entry.config &&
        entries.back().launch == entry.launch) {
      entries.back().m_max = entry.m_max;
    } else {
      entries.push_back(std::move(entry));
    }
  }
  return entries;
}

}  // namespace hummingd
