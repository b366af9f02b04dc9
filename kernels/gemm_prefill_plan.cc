#include "kernels/gemm_prefill_plan.h"

#include <algorithm>
#include <cstdint>

#include "kernels/gemm_config.h"
#include "kernels/gemm_decode_plan.h"
#include "kernels/planner.h"

namespace hummingd {
namespace {

struct PrefillRange {
  int64_t m_min;
  int64_t m_max;
};

// Finer than the mma.sync ranges below 1025: each range picks the split-K
// factor that fills the machine at its m_max, and the grid's M extent
// doubles from one range to the next.
constexpr PrefillRange kPrefillRanges[] = {
    {65, 128}, {129, 256}, {257, 512}, {513, 1024}, {1025, kDefaultMaxM}};

constexpr int kTokensPerBlock = 64;

// The 128-row tile (one 64-row block per warpgroup, two warpgroups, 4
// stages of 128 columns; two blocks per SM with <= 4-bit weights) or the
// 256-row one (four warpgroups, 3 stages, one block per SM). Sweeps ba and
// bb (bench/results/tile-sweep-prefill-a0b7394.md): the 256-row tile won
// at M = 8192 on all six layers (8192 x 8192 2437 against 2712 µs; 4096 x
// 14336 2091 / 2384) and lost or tied below (28672 x 8192 at M = 256 262
// against 227; M = 1024 within 5% either way), except with 8-bit weights,
// whose 128-row tile runs one per SM (4 stages of 32 KB): there it won from
// M = 256 (e4m3 8192 x 8192 75.4 against 90.5 µs) and lost at M = 128
// (75.2 against 45.7).
GemmTileConfig PrefillTile(bool rows_256) {
  GemmTileConfig tile;
  tile.mma = GemmMma::kWgmma;
  tile.block_m = kTokensPerBlock;
  tile.warps_m = 1;
  tile.warps_n = rows_256 ? 16 : 8;
  tile.block_n = rows_256 ? 256 : 128;
  tile.block_k = 128;
  tile.stages = rows_256 ? 3 : 4;
  return tile;
}

bool TakesRows256(const PrefillRange& range, const QuantSpec& spec,
                  const LayerShape& shape) {
  if (shape.n % 256 != 0) return false;
  return spec.weight.bits > 4 ? range.m_min > 128 : range.m_min > 1024;
}

}  // namespace

absl::StatusOr<std::vector<PlanEntry>> PlanWgmmaPrefill(const QuantSpec& spec,
                                                        const LayerShape& shape,
                                                        int sm_count,
                                                        int smem_limit) {
  std::vector<PlanEntry> entries;
  if (shape.n % 128 != 0 || shape.k % 128 != 0) return entries;
  for (const PrefillRange& range : kPrefillRanges) {
    const GemmTileConfig tile = PrefillTile(TakesRows256(range, spec, shape));
    const int shared_bytes = tile.SharedBytes(spec);
    if (shared_bytes > smem_limit ||
        !ValidateGemmTile(tile, shape.n, shape.k).ok()) {
      return std::vector<PlanEntry>{};
    }
    const int blocks_per_sm =
        std::min(WgmmaBlocksPerSm(tile),
                 Sm90ResidentBlocks(tile.Threads(), /*registers_per_thread=*/0,
                                    shared_bytes));
    const int64_t m_blocks =
        (range.m_max + kTokensPerBlock - 1) / kTokensPerBlock;
    const int64_t blocks = m_blocks * (shape.n / tile.block_n);
    const double weight_bytes =
        static_cast<double>(shape.n) * shape.k * spec.weight.bits / 8.0;
    // Each split's fp32 partial of the whole output, written and read once.
    const double partial_bytes =
        2.0 * static_cast<double>(std::min<int64_t>(range.m_max, 1 << 16)) *
        shape.n * 4.0;
    // Measured at M = 128 and 256 (sweep bb): 4096 x 4096 in 4 and 2
    // splits 13.8 and 20.9 µs against 21.7 and 32.2 unsplit; 4096 x 14336
    // 33.3 and 59.8 against 82.0 and 107.1.
    const int64_t splits = ChooseSplitK(
        blocks, shape.k / tile.block_k, int64_t{sm_count} * blocks_per_sm,
        /*min_tiles_per_split=*/4, /*max_splits=*/16, partial_bytes,
        weight_bytes);
    entries.push_back(MakeGemmPlanEntry(range.m_min, range.m_max, tile, spec,
                                        shape, splits, smem_limit));
  }
  return entries;
}

}  // namespace hummingd
