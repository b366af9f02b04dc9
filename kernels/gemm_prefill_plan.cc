#include "kernels/gemm_prefill_plan.h"

#include <algorithm>
#include <cstdint>

#include "kernels/gemm_config.h"
#include "kernels/gemm_decode_plan.h"

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
// stages of 128 columns) or the 256-row one (four warpgroups, 3 stages, one
// block per SM).
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

// Blocks of `tile` an SM holds: the stub's launch bounds cap the registers
// at WgmmaBlocksPerSm's count, and MakeGemmPlanEntry only ever pads the
// shared-memory request up to that count, so shared memory decides the
// rest (registers counted as 0: the cap already holds them).
int PrefillBlocksPerSm(const GemmTileConfig& tile, const QuantSpec& spec) {
  return std::min(WgmmaBlocksPerSm(tile),
                  Sm90ResidentBlocks(tile.Threads(), /*registers_per_thread=*/0,
                                     tile.SharedBytes(spec)));
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

}  // namespace

std::vector<PlanEntry> PlanWgmmaPrefill(const QuantSpec& spec,
                                        const LayerShape& shape, int sm_count,
                                        int smem_limit) {
  std::vector<PlanEntry> entries;
  if (shape.n % 128 != 0 || shape.k % 128 != 0) return entries;
  for (const PrefillRange& range : kPrefillRanges) {
    const GemmTileConfig tile = PrefillTile(TakesRows256(range, spec, shape));
    if (tile.SharedBytes(spec) > smem_limit ||
        !ValidateGemmTile(tile, shape.n, shape.k).ok()) {
      return {};
    }
    const int64_t m_blocks =
        (range.m_max + kTokensPerBlock - 1) / kTokensPerBlock;
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
                     /*min_tiles_per_split=*/4, /*max_splits=*/16,
                     partial_bytes, weight_bytes);
    entries.push_back(MakeGemmPlanEntry(range.m_min, range.m_max, tile, spec,
                                        shape, splits, smem_limit));
  }
  return entries;
}

}  // namespace hummingd
