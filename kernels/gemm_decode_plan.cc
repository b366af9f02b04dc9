#include "kernels/gemm_decode_plan.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace hummingd {
namespace {

// Shared memory per block for two blocks per SM (228 KB per SM, 1 KB of it
// reserved per block), and for one.
constexpr int kTwoBlocksSharedBytes = 113 * 1024;
constexpr int kOneBlockSharedBytes = 227 * 1024;
constexpr int kMaxStages = 12;

struct DecodeRange {
  int64_t m_min;
  int64_t m_max;
  int tokens;
};

constexpr DecodeRange kDecodeRanges[] = {
    {1, 8, 8}, {9, 16, 16}, {17, 32, 32}, {33, 64, 64}};

}  // namespace

PlanEntry MakeGemmPlanEntry(int64_t m_min, int64_t m_max,
                            const GemmTileConfig& tile, const QuantSpec& spec,
                            const LayerShape& shape, int64_t splits) {
  PlanEntry entry;
  entry.m_min = m_min;
  entry.m_max = m_max;
  entry.config.family = KernelFamily::kGemm;
  entry.config.skeleton = tile.Skeleton();
  entry.config.text = FormatGemmTileText(tile);
  entry.config.threads_per_block = tile.Threads();
  entry.config.dynamic_shared_memory = tile.SharedBytes(spec);
  entry.launch.block_x = tile.Threads();
  entry.launch.grid_x = 1;
  entry.launch.m_per_block_x = tile.block_m;
  entry.launch.grid_y = shape.n / tile.block_n;
  entry.launch.grid_z = splits;
  entry.launch.dynamic_shared_memory = entry.config.dynamic_shared_memory;
  entry.launch.workspace_bytes_per_m_block =
      GemmWorkspaceBytesPerMBlock(tile, shape.n, splits);
  entry.launch.counter_bytes_per_m_block =
      GemmCounterBytesPerMBlock(tile, shape.n, splits);
  // The wgmma skeleton waits for its predecessor before reading activations
  // (gemm/wgmma_gemm.cuh), so its weight prefetch can overlap that
  // kernel's tail.
  entry.launch.programmatic_dependent_launch = tile.mma == GemmMma::kWgmma;
  return entry;
}

int64_t ChooseSplitK(int64_t blocks, int64_t k_tiles, int64_t slots,
                     int64_t min_tiles_per_split, int64_t max_splits,
                     double reduction_bytes_per_split, double stream_bytes) {
  const int64_t limit = std::max<int64_t>(
      1, std::min(max_splits,
                  k_tiles / std::max<int64_t>(1, min_tiles_per_split)));
  int64_t best = 1;
  double best_score = 0.0;
  for (int64_t splits = 1; splits <= limit; ++splits) {
    const int64_t total = blocks * splits;
    const int64_t waves = (total + slots - 1) / slots;
    const double fill =
        static_cast<double>(total) / static_cast<double>(waves * slots);
    const double reduction =
        splits > 1 ? static_cast<double>(splits) * reduction_bytes_per_split
                   : 0.0;
    // Partials are written and read back through L2, at about a third of
    // the cost of streaming the same bytes from HBM.
    const double score = fill / (1.0 + reduction / (3.0 * stream_bytes));
    if (score > best_score * 1.02) {
      best_score = score;
      best = splits;
    }
  }
  return best;
}

bool WgmmaDecodeApplies(const GpuTarget& gpu, const QuantSpec& spec,
                        const LayerShape& shape) {
  return gpu.sm == 90 && shape.n % 64 == 0 &&
         (spec.activation_type == DataType::kFp16 ||
          spec.activation_type == DataType::kBf16);
}

absl::StatusOr<std::vector<PlanEntry>> PlanWgmmaDecode(const QuantSpec& spec,
                                                       const LayerShape& shape,
                                                       int sm_count,
                                                       int smem_limit) {
  std::vector<PlanEntry> entries;
  for (const DecodeRange& range : kDecodeRanges) {
    GemmTileConfig tile;
    tile.mma = GemmMma::kWgmma;
    tile.block_m = range.tokens;
    tile.warps_m = 1;
    // Two warpgroups of two 64-row blocks each when N allows: every k16
    // step's fence / commit / wait and activation descriptor then serve two
    // wgmmas (the decode kernel is issue-bound at 8 tokens with one), and
    // the activation tile is re-read from L2 once per 256 weight rows.
    const bool two_groups = shape.n % 128 == 0;
    const bool two_blocks = shape.n % 256 == 0;
    tile.warps_n = two_groups ? 8 : 4;
    tile.block_n = 64 * (two_groups ? 2 : 1) * (two_blocks ? 2 : 1);
    // 128-column k-tiles while a stage stays near 16 KB (up to 16 tokens,
    // up to 4-bit weights); else 64 columns, so that the ring still holds
    // enough k-tiles to keep HBM busy.
    const bool one_block = WgmmaBlocksPerSm(tile) == 1;
    tile.block_k =
        range.tokens <= 16 && spec.weight.bits <= 4 && shape.k % 128 == 0 ? 128
                                                                          : 64;
    tile.stages = kMaxStages;
    const int budget = std::min(
        one_block ? kOneBlockSharedBytes : kTwoBlocksSharedBytes, smem_limit);
    while (tile.stages > 3 && tile.SharedBytes(spec) > budget) --tile.stages;
    if (tile.SharedBytes(spec) > smem_limit) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "gpu.max_shared_memory_per_block_optin: ", smem_limit,
          " bytes cannot hold three stages of ", FormatGemmTileText(tile)));
    }
    RETURN_IF_ERROR(ValidateGemmTile(tile, shape.n, shape.k));
    const int64_t n_blocks = shape.n / tile.block_n;
    const int64_t k_tiles = shape.k / tile.block_k;
    const double weight_bytes =
        static_cast<double>(shape.n) * shape.k * spec.weight.bits / 8.0;
    // Each split's fp32 partial of the whole output (tokens x N), written
    // and read once.
    const double partial_bytes = 2.0 * range.tokens * shape.n * 4.0;
    // Fill is counted over block slots (two per SM up to 32 tokens): one
    // 8-warp block per SM cannot hide the memory latency (measured: 8192 x
    // 8192 at M = 1 took 23.4 µs with 128 blocks, 15.2 with 256).
    const int64_t slots = int64_t{sm_count} * (one_block ? 1 : 2);
    const int64_t splits =
        ChooseSplitK(n_blocks, k_tiles, slots, /*min_tiles_per_split=*/4,
                     /*max_splits=*/16, partial_bytes, weight_bytes);
    entries.push_back(
        MakeGemmPlanEntry(range.m_min, range.m_max, tile, spec, shape, splits));
  }
  return entries;
}

}  // namespace hummingd
