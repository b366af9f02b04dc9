#include "kernels/gemm_decode_plan.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gemm/wgmma_config.cuh"
#include "kernels/gemm_decode_ksplit.h"
#include "kernels/gemm_decode_rules.h"
#include "kernels/gemm_decode_short_splits.h"
#include "kernels/gemm_decode_sixteen_warps.h"
#include "kernels/gemm_decode_tile_options.h"

namespace hummingd {
namespace {

constexpr int kMaxStages = 12;
// Layers below 8192 x 8192 weights (issue 5's "smaller layers") are
// launch- and ramp-bound rather than stream-bound; a few measured choices
// differ there.
constexpr int64_t kLargeLayerWeights = int64_t{8192} * 8192;

bool IsSmallLayer(const LayerShape& shape) {
  return shape.n * shape.k < kLargeLayerWeights;
}

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
                            const LayerShape& shape, int64_t splits,
                            int smem_limit) {
  PlanEntry entry;
  entry.m_min = m_min;
  entry.m_max = m_max;
  entry.config.family = KernelFamily::kGemm;
  entry.config.skeleton = tile.Skeleton();
  entry.config.text = FormatGemmTileText(tile);
  entry.config.threads_per_block = tile.Threads();
  entry.config.dynamic_shared_memory = tile.SharedBytes(spec);
  // A wgmma decode kernel runs exactly the blocks per SM it was planned
  // for: its request for shared memory leaves no room for one more, however
  // few registers the compiler ends up using. (A build whose 32-token
  // kernel fit three blocks where two were planned took 63.7 µs against
  // 45.7 on 8192 x 28672 at M = 32, most likely by piling its one-wave grid
  // onto fewer SMs; bench/decode-notes.md v40.)
  if (tile.mma == GemmMma::kWgmma) {
    entry.config.dynamic_shared_memory = std::max(
        entry.config.dynamic_shared_memory,
        std::min(Sm90SharedBytesForAtMost(WgmmaBlocksPerSm(tile)), smem_limit));
  }
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

double SplitKScore(int64_t blocks, int64_t splits, int64_t slots,
                   double reduction_bytes_per_split, double stream_bytes) {
  const int64_t total = blocks * splits;
  const int64_t waves = (total + slots - 1) / slots;
  const double fill =
      static_cast<double>(total) / static_cast<double>(waves * slots);
  const double reduction =
      splits > 1 ? static_cast<double>(splits) * reduction_bytes_per_split
                 : 0.0;
  // Partials are written and read back through L2, at about a third of
  // the cost of streaming the same bytes from HBM.
  return fill / (1.0 + reduction / (3.0 * stream_bytes));
}

int64_t ChooseSplitK(int64_t blocks, int64_t k_tiles, int64_t slots,
                     int64_t min_tiles_per_split, int64_t max_splits,
                     double reduction_bytes_per_split, double stream_bytes) {
  int64_t limit = std::max<int64_t>(
      1, std::min(max_splits,
                  k_tiles / std::max<int64_t>(1, min_tiles_per_split)));
  // Splits stay within one wave of block slots when the blocks alone fit
  // in it: every extra wave measured slower than the fill it gains
  // (28672 x 8192 W4 at M = 1: 2 splits in one wave 36.7 µs, 3 splits 39.9,
  // 7 splits in three waves 39.2; at M = 16, no split 44.6 against 7 splits
  // 52.5; bench/results/tile-sweep-a9fcdbf.md). Layers with more blocks than
  // slots are not split at all (planner v26): filling whole waves there took
  // 9-10% longer than the unsplit grid's 1.7 waves (57344 x 8192 in 128-row
  // blocks, the v25 plan's four splits in seven waves against one split,
  // same tiles: W4 fp16 M = 1 77.6 against 70.2 µs, M = 16 85.9 / 78.0,
  // M = 32 105.2 / 96.1; uint8 M = 16 138.1 / 123.9; bench/results/
  // tile-sweep-decode-wide.md, sweep at). Measured with uint4 in groups of
  // 128 and uint8; other specs, and 64-row blocks (N not a multiple of 128,
  // so from N > 16896), follow unmeasured.
  limit = std::max<int64_t>(1, std::min(limit, slots / blocks));
  int64_t best = 1;
  double best_score = 0.0;
  for (int64_t splits = 1; splits <= limit; ++splits) {
    const double score = SplitKScore(blocks, splits, slots,
                                     reduction_bytes_per_split, stream_bytes);
    if (score > best_score * 1.02) {
      best_score = score;
      best = splits;
    }
  }
  return best;
}

bool WgmmaDecodeApplies(const GpuTarget& gpu, const QuantSpec& spec,
                        const LayerShape& shape) {
  // wgmma exists only in sm_90a's arch-specific feature set: a cubin built
  // for plain sm_90 has none (HUMMINGD_HAS_WGMMA is off there).
  return gpu.sm == 90 && gpu.arch_specific && shape.n % 64 == 0 &&
         (spec.activation_type == DataType::kFp16 ||
          spec.activation_type == DataType::kBf16);
}

namespace {

// One candidate tile of a decode range, with its split-K factor and score.
struct DecodeCandidate {
  GemmTileConfig tile;
  int64_t splits = 1;
  double score = 0.0;
};

// The decode tile of `range` with `row_blocks` 64-row blocks per warpgroup
// (two warpgroups when N allows), stages filling the block's share of
// shared memory, and the split-K factor that fills the block slots.
absl::StatusOr<DecodeCandidate> MakeDecodeCandidate(
    const DecodeRange& range, int row_blocks, const QuantSpec& spec,
    const LayerShape& shape, int sm_count, int smem_limit) {
  DecodeCandidate candidate;
  GemmTileConfig& tile = candidate.tile;
  tile.mma = GemmMma::kWgmma;
  tile.block_m = range.tokens;
  tile.warps_m = 1;
  const bool two_groups = shape.n % 128 == 0;
  tile.warps_n = two_groups ? 8 : 4;
  tile.block_n = 64 * (two_groups ? 2 : 1) * row_blocks;
  // 128-column k-tiles for <= 4-bit weights: each n-unit's run is then
  // 1 KB per tile, where 512-byte runs cost a third of the HBM bandwidth
  // (bench/probes/stream_probe.cu: 3.2 vs 2.2 TB/s). 8-bit runs are 1 KB
  // at 64 columns.
  // Wider weights at 16 and 32 tokens also stream 128-column tiles (2 KB
  // runs at 8 bits): at 32 tokens 8192 x 8192 uint8 21.9 against 24.5 µs,
  // e4m3 21.6 against 22.5; at 16 tokens, in 128-row blocks, 10-16% faster than
  // 256-row BK 64 tiles on four layers (8192 x 8192 uint8 19.9 against
  // 22.5 µs; bench/results/tile-sweep-a2df06b.md).
  // And at 8 tokens on the small layers, where the 16-token tile's shape and
  // splits beat the 256-row BK 64 tile (bench/results/tile-sweep-e24ce42.md,
  // sweep l, M = 1: uint8 4096 x 4096 7.03 against 9.61 µs, 6144 x 4096
  // 9.05 against 10.98, 4096 x 14336 16.82 against 19.09; e4m3 4096 x 14336
  // 16.59 against 18.85).
  const bool wide_weights_small_layer =
      spec.weight.bits > 4 && range.tokens == 8 && IsSmallLayer(shape);
  const bool wide_k_tiles = spec.weight.bits <= 4 || range.tokens == 16 ||
                            range.tokens == 32 || wide_weights_small_layer;
  tile.block_k = wide_k_tiles && shape.k % 128 == 0 ? 128 : 64;
  // The residency of the deepest ring (WgmmaBlocksPerSm reads the stages).
  tile.stages = kMaxStages;
  const bool one_block = WgmmaBlocksPerSm(tile) == 1;
  const int budget = std::min(
      one_block ? kOneBlockSharedBytes : kTwoBlocksSharedBytes, smem_limit);
  while (tile.stages > 3 && tile.SharedBytes(spec) > budget) --tile.stages;
  // A shorter ring streamed <= 4-bit weights faster at 8 tokens (timeline
  // probe, 46a77ef, M = 1: 8192 x 8192 in 256-row blocks 14.3 µs with 5
  // stages, 13.4 with 4; 4096 x 14336 in 128-row blocks 14.7 with 10, 13.9
  // with 8). A fuller ring only queues more requests behind the same HBM.
  if (range.tokens == 8 && spec.weight.bits <= 4) {
    tile.stages = std::min(tile.stages, row_blocks == 2 ? 4 : 8);
  }
  // The same at 16 tokens in 256-row blocks (8192 x 28672: 38.4 µs with 4
  // stages) and for wider weights (8-bit: 4 and 5 stages within 2%), and at 32
  // tokens for every width: 4 stages beat the 6 (4-bit) or 8 (8-bit) that
  // fit on all six layers of issue 5 (4096 x 4096: 8.3 against 9.2 µs;
  // 8192 x 8192: 17.4 against 17.6).
  if ((range.tokens == 16 && (spec.weight.bits > 4 || row_blocks == 2)) ||
      wide_weights_small_layer) {
    tile.stages = std::min(tile.stages, 4);
  }
  if (range.tokens == 32) tile.stages = std::min(tile.stages, 4);
  // 8-bit weights at 64 tokens scale each operand pair instead of deferring
  // the scales to the fp32 partial sums, so the k-loop never drains the
  // wgmma pipe (uint8, against the deferred tile, same splits: 8192 x 8192
  // 27.4 against 29.1 µs, 28672 x 8192 87.4 against 92.4, 8192 x 28672 82.6
  // against 86.1; in the f3e0884 table 3-7% faster on every layer but e4m3
  // 4096 x 4096 and 6144 x 4096, 4.0% and 2.5% slower). 4-bit weights lost
  // with it at 32 and 64 tokens on five of six layers (8192 x 8192 at M = 32:
  // 17.7 against 16.5; bench/results/tile-sweep-318e682.md), except in
  // groups of 32 and 64 (planners v70-v72, PrescaledScalesWin in
  // kernels/gemm_decode_tile_options.cc, set on the range's final tile); 5-
  // to 7-bit weights are unmeasured and keep deferred scales.
  tile.prescaled_scales = range.tokens == 64 && spec.weight.bits == 8;
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
  // Fill is counted over block slots (two per SM for the tiles that run
  // two): one 8-warp block per SM cannot hide the memory latency
  // (measured: 8192 x 8192 at M = 1 took 23.4 µs with 128 blocks, 15.2
  // with 256).
  const int64_t slots = int64_t{sm_count} * (one_block ? 1 : 2);
  candidate.splits =
      ChooseSplitK(n_blocks, k_tiles, slots, /*min_tiles_per_split=*/4,
                   /*max_splits=*/16, partial_bytes, weight_bytes);
  candidate.score = SplitKScore(n_blocks, candidate.splits, slots,
                                partial_bytes, weight_bytes);
  // Weights by per-thread cp.async: bulk (TMA) copies won only for 8-bit
  // weights at 8 tokens before the scales travelled in chunks (8192 x
  // 28672: 73.6 vs 94.8 µs), and lose since (8192 x 8192 uint8 at M = 1:
  // 23.3 µs bulk, 19.8 cp.async), except on the 64-row half tile with fp16
  // activations over long splits (BulkWeightsWin, set once the range's
  // tile is chosen). `--override ...,copy=bulk` keeps them measurable.
  tile.bulk_weights = false;
  return candidate;
}

// Decode tiles of <= 4-bit weights that run more than two blocks per SM on
// layers that need many short splits (scale entries of 128 columns or more
// along K, and groups of 32 and 64 at 16 tokens since planner v35): 128
// rows, 128 columns, 4 stages, split to fill the blocks.
struct PackedTileRule {
  int tokens;
  int blocks_per_sm;
  int shared_bytes;  // per block
  // The longest splits, in k-tiles, on which it still won.
  int max_tiles_per_split;
};

// 8 tokens, four per SM (52 KB, 56 registers under a cap of 64), so twice
// the blocks share the SMs. Measured against the previous plan (sweeps e
// and f, bench/results/tile-sweep-318e682.md): 8192 x 8192 with 8 splits
// (512 blocks) 11.8 against 12.1 µs, 4096 x 14336 with 16 splits 11.3
// against 12.2, 6144 x 4096 with 8 splits (384 blocks) 7.0-7.1 against
// 7.3-7.5. It lost where it cannot pass two blocks per SM (4096 x 4096: 8
// splits are 256 blocks, 16 splits leave 2 k-tiles each; 6.7 against 5.8)
// and on long splits (28672 x 8192, 32 k-tiles per split: 40.7 against
// 34.9). The table at f3e0884 (gemm-decode-f3e0884.md) confirmed the fp16
// gains and found 8192 x 8192 with groups of 32 and 64 slower (14.4 against
// 13.8 µs, 12.8 against 12.4 at M = 1): finer scale entries stay off this
// rule (PackedTileCandidate).
constexpr PackedTileRule kFourPerSm8Tokens = {8, 4, kFourBlocksSharedBytes, 8};
// 16 tokens, three per SM (57 KB; 64 registers and no spills under the cap
// that blocks=3 sets, sweep h). Against the plan (bench/results/
// tile-sweep-e24ce42.md, M = 16): 8192 x 8192 with 6 splits 13.98 against
// 14.46 µs (16x256x128, 8 splits), 4096 x 14336 with 12 splits 13.42
// against 13.77 (16x128x128 s8, 8 splits), 6144 x 4096 with 8 splits 7.77
// against 8.56. No gain where it cannot pass two blocks per SM (4096 x
// 4096, 8 splits are 256 blocks: 7.08 against 7.03), a loss on long splits
// (8192 x 28672, 6 splits of 37 k-tiles: 39.02 against 36.44), and losses
// with more splits than three per SM hold (8192 x 8192 with 8: 16.69;
// 4096 x 14336 with 16: 16.57).
constexpr PackedTileRule kThreePerSm16Tokens = {16, 3, kThreeBlocksSharedBytes,
                                                12};

// The 128-row, two-warpgroup decode tile of the packed and wide k-tile
// rules for weights with scale entries >= 128 columns along K or in groups
// of 32 and 64 (HasGroupRulesFineScales), or nullopt
// where the spec, the shape or `shared_budget` (per block) rule it out
// (the callers say which weight widths they were measured with). Its launch
// bounds are spelled out (blocks=N) only where WgmmaBlocksPerSm's rule gives
// another count, so tiles that match it keep their text.
std::optional<GemmTileConfig> NarrowDecodeTile(
    int tokens, int block_k, int stages, int blocks_per_sm, int shared_budget,
    const QuantSpec& spec, const LayerShape& shape, int smem_limit) {
  if (HasUnmeasuredFineScales(spec) || shape.n % 128 != 0 ||
      shape.k % block_k != 0) {
    return std::nullopt;
  }
  GemmTileConfig tile = WgmmaTwoWarpgroupTile(tokens, block_k, stages);
  if (WgmmaBlocksPerSm(tile) != blocks_per_sm) {
    tile.blocks_per_sm = blocks_per_sm;
  }
  if (!FitsAndValidates(tile, shared_budget, spec, shape, smem_limit)) {
    return std::nullopt;
  }
  return tile;
}

std::optional<DecodeCandidate> PackedTileCandidate(
    const PackedTileRule& rule, const DecodeRange& range, const QuantSpec& spec,
    const LayerShape& shape, int sm_count, int smem_limit) {
  // Groups of 32 and 64 lost four per SM at 8 tokens (kFourPerSm8Tokens).
  const bool fine_at_8_tokens = rule.tokens == 8 && HasFineScales(spec);
  if (range.tokens != rule.tokens || spec.weight.bits > 4 || fine_at_8_tokens) {
    return std::nullopt;
  }
  std::optional<GemmTileConfig> narrow = NarrowDecodeTile(
      range.tokens, /*block_k=*/128, /*stages=*/4, rule.blocks_per_sm,
      rule.shared_bytes, spec, shape, smem_limit);
  if (!narrow.has_value()) return std::nullopt;
  DecodeCandidate candidate;
  GemmTileConfig& tile = candidate.tile;
  tile = *narrow;
  const int64_t n_blocks = shape.n / tile.block_n;
  const int64_t k_tiles = shape.k / tile.block_k;
  candidate.splits =
      std::min<int64_t>({int64_t{rule.blocks_per_sm} * sm_count / n_blocks,
                         k_tiles / 4, int64_t{16}});
  if (candidate.splits < 1) return std::nullopt;
  const int64_t blocks = n_blocks * candidate.splits;
  const bool more_than_two_per_sm = blocks > int64_t{2} * sm_count;
  const bool short_splits =
      k_tiles <= int64_t{rule.max_tiles_per_split} * candidate.splits;
  if (!more_than_two_per_sm || !short_splits) return std::nullopt;
  return candidate;
}

// 256-column k-tiles at 8 and 16 tokens, split into runs of two k-tiles,
// where the whole grid fits one wave of block slots (which confines them
// to small layers: N·K <= 3 · SMs · 64 Ki weights). The k-loop is
// issue-bound (tensor and ALU time add: bench/probes/split_roles_probe.cu,
// and at <= 16 tokens wgmma_probe.cu), and a 128-column tile spends ~30 SASS
// per k16 step of which ~9 are the decode; a 256-column tile halves the
// per-tile part (copy issue, stage addresses, scale loads): 30.1 -> 21.9 per
// step at 8 tokens. Measured against the plan (bench/results/
// tile-sweep-372666e.md, sweeps n and o; M = 1, 16): 4096 x 4096 8x128x256
// s4 (256 blocks, two per SM) 5.48 against 5.75 µs, bf16 5.57 against
// 5.85, channel-wise scales 6.09 against 6.61; 16x128x256 s3 6.42 against
// 7.05, bf16 6.47 against 7.26; 6144 x 4096 8x128x256 s3 three per SM (384
// blocks) 6.19 against 6.99, bf16 6.32 against 7.41. It lost wherever the
// grid needs a second wave (8192 x 8192 with 8 splits, 512 blocks: 14.0
// against 11.7; 4096 x 14336 with 14-16 splits: 13.7 against 11.2; 6144 x
// 4096 two per SM: 9.0) and at 16 tokens three per SM (6144 x 4096: 10.5
// against 7.7).
std::optional<DecodeCandidate> K256ShortSplitCandidate(const DecodeRange& range,
                                                       const QuantSpec& spec,
                                                       const LayerShape& shape,
                                                       int sm_count,
                                                       int smem_limit) {
  constexpr int kBlockK = 256;
  if (range.tokens != 8 && range.tokens != 16) return std::nullopt;
  const int64_t n_blocks = shape.n / 128;
  const int64_t k_tiles = shape.k / kBlockK;
  const int64_t two_per_sm = int64_t{2} * sm_count;
  DecodeCandidate candidate;
  candidate.splits = std::min<int64_t>(k_tiles / 2, 16);
  std::optional<GemmTileConfig> tile;
  // Two k-tiles per split (one split of three when the count is odd).
  if (candidate.splits >= 1 && k_tiles <= 2 * candidate.splits + 1) {
    const int64_t blocks = n_blocks * candidate.splits;
    if (blocks <= two_per_sm) {
      tile = NarrowDecodeTile(range.tokens, kBlockK, range.tokens == 8 ? 4 : 3,
                              /*blocks_per_sm=*/2, kTwoBlocksSharedBytes, spec,
                              shape, smem_limit);
    } else if (range.tokens == 8 && blocks <= int64_t{3} * sm_count) {
      tile = NarrowDecodeTile(range.tokens, kBlockK, /*stages=*/3,
                              /*blocks_per_sm=*/3, kThreeBlocksSharedBytes,
                              spec, shape, smem_limit);
    }
  }
  if (!tile.has_value()) return std::nullopt;
  candidate.tile = *tile;
  return candidate;
}

// The k-tile width at which a 128-row tile carries 16 KB of weights per
// stage: 256 columns of 4-bit weights (less for narrower ones), 128 of
// 8-bit ones; 0 for the widths no sweep measured (5 to 7 bits).
int WideBlockK(const QuantSpec& spec) {
  if (spec.weight.bits <= 4) return 256;
  if (spec.weight.bits == 8) return 128;
  return 0;
}

// OneWarpgroupHalfTile (gemm_decode_rules.h) at 8 tokens, four per SM: the
// same warps per SM in blocks that each wait at their barrier for four warps
// instead of eight, and a grid of twice the blocks over twice the slots.
// Planned where it was measured: 4-bit weights at 8 tokens in splits of under 8
// k-tiles (decode-notes v73, sweeps bn and bo,
// bench/results/tile-sweep-bo-*.json): 4096 x 14336, 8 splits of 7 k-tiles,
// 8x64x256 s4 four per SM against the 128-row tile two per SM, M = 1 / 2 / 4 /
// 8: fp16 9.67 / 9.72 / 9.80 / 9.91 µs against 9.88 / 9.93 / 9.99 / 10.04,
// bf16 9.94 / 9.99 / 10.07 / 10.13 against 10.21 / 10.27 / 10.39 / 10.39. Its
// neighbours lost: 7 splits (fp16 9.81-10.10, bf16 10.66-10.91), three stages
// (fp16 10.30-10.50, bf16 10.37-10.61), three per SM in 6 splits (M = 1 / 8:
// fp16 9.89 / 10.05, bf16 10.08 / 10.26), two per SM in 4 or 8 splits of 4 or 6
// stages (fp16 10.17-13.64, bf16 10.39-14.27).

// Long splits: since the 8-token k-loop runs on mma.sync (decode-notes
// v41), longer splits win too at 8 tokens (planner v16, bench/results/
// tile-sweep-83b167f.md, sweeps r and s, W4 M = 1 unless said): 8x128x256
// s4, two per SM, as many splits as one wave holds, against the plan of
// 8a4daf3: 8192 x 8192 4 splits 10.79 against 11.42 µs; 4096 x 14336 8
// splits 9.96 against 10.86 (M = 8: 10.11 against 11.04; bf16 10.58 against
// 11.45); 8192 x 28672 4 splits 30.73 against 31.71; 28672 x 8192 one
// split 31.24 against 32.65. Three stages (3 per SM) lost (4096 x 14336:
// 10.94), five (two per SM) too (10.88; 8192 x 8192: 11.37), as did fewer
// splits in one wave (8192 x 8192 8x128x256 s3 4 splits: 11.88). The
// measured grids filled 85-97% of the slots; the rule asks for 3/4. With
// bf16 activations it won on splits of 7-8 k-tiles (4096 x 14336 10.60
// against 11.53, 8192 x 8192 11.59 against 12.12) and lost on 28-32
// against the 256-row k-major tile (8192 x 28672 33.27 against 31.92,
// 28672 x 8192 35.74 against 34.32; gemm-decode-c09b1b4.md, planner v17),
// so bf16 takes it up to 8 k-tiles per split.
//
// Planner v18 (bench/results/tile-sweep-16fb0a2.md, sweeps t, u, w): the
// long-split rule of v16 holds beyond 4-bit weights at 8 tokens.
// - 16 tokens, 16x128x256 s4, against the plan of 16fb0a2 (M = 16): fp16
//   8192 x 8192 4 splits 12.80 against 13.61 µs, 4096 x 14336 8 splits
//   12.06 against 13.05, 28672 x 8192 one split 37.14 against 37.84,
//   8192 x 28672 4 splits 34.85 against 34.85; bf16 8192 x 8192 13.75
//   against 14.67, 4096 x 14336 12.94 against 14.08, but 28672 x 8192
//   41.51 against 40.63 and 8192 x 28672 38.74 against 37.10 (32 and 28
//   k-tiles per split: bf16's 8-k-tile limit again). 6144 x 4096 (5 splits
//   of 3.2 k-tiles) lost: 7.91 against 7.69.
// - 32 tokens, 32x128x256 s3 (three stages fit two per SM), same splits:
//   8192 x 8192 15.86 against 16.27, 4096 x 14336 14.93 against 15.33,
//   28672 x 8192 45.71 against 48.02; tile-sweep-372666e.md had the same
//   on older kernels (8192 x 28672 44.63 against 45.61) and losses on the
//   splits of 2 and 3.2 k-tiles (4096 x 4096 8.72 against 8.39, 6144 x
//   4096 10.23 against 9.69). So at 16 and 32 tokens each split keeps >= 4
//   k-tiles.
// - 8-bit weights at 8 tokens in 128-column tiles (the same 16 KB per
//   stage), 4 stages: uint8 8192 x 8192 4 splits 18.16 against 19.78 µs
//   (e4m3 18.18 against 19.85), 8192 x 28672 4 splits 56.34 against 57.32,
//   28672 x 8192 one split 63.36 against 65.92; 256-column 8-bit tiles
//   (three stages) lost by 20-35%. On the small layers the rule gives the
//   tile and splits they already had (three per SM lost: 4096 x 4096 7.39
//   against 6.86).
// bf16 with 8-bit weights was not measured; it takes the same 8-k-tile
// limit. bf16 with weights of <= 4 bits and group scales has none since
// planners v53 / v54 (below), except in groups of 32.
std::optional<DecodeCandidate> LongSplitTileCandidate(
    const DecodeRange& range, const QuantSpec& spec, const LayerShape& shape,
    int sm_count, int smem_limit, int block_k) {
  const bool eight_bit = spec.weight.bits == 8;
  if (range.tokens == 64 || (eight_bit && range.tokens != 8)) {
    return std::nullopt;
  }
  const int64_t n_blocks = shape.n / 128;
  const int64_t k_tiles = shape.k / block_k;
  const int64_t two_per_sm = int64_t{2} * sm_count;
  // Layers wider than a wave of blocks run unsplit (ChooseSplitK), and so do
  // these tiles there (where PlanWgmmaDecode does not keep a 256-row k-major
  // tile instead).
  const bool wider_than_a_wave = n_blocks > two_per_sm;
  DecodeCandidate candidate;
  candidate.splits =
      wider_than_a_wave
          ? 1
          : std::min<int64_t>({two_per_sm / n_blocks, k_tiles, int64_t{16}});
  if (candidate.splits < 1) return std::nullopt;
  const bool fills_the_wave =
      wider_than_a_wave || 4 * n_blocks * candidate.splits >= 3 * two_per_sm;
  // Groups of 32 columns share bf16's limit (planner v35, sweep bs, fp16
  // groups of 32 against the 256-row k-major plan: 8192 x 28672, 28 k-tiles
  // per split, 8x128x256 34.62 / 35.22 µs at M = 1 / 8 against 34.14 /
  // 34.61, 16x128x256 38.48 against 37.48 at M = 16; 28672 x 8192, 32 k-tiles,
  // 35.11 / 36.27 against 35.01 / 35.96). Groups of 64 won there (8192 x
  // 28672 32.09 / 32.69 against 32.41 / 32.86, 35.30 against 35.50 at M =
  // 16; 28672 x 8192 32.99 / 33.94 against 33.45 / 34.06, 37.59 against
  // 37.86).
  // bf16 with group scales and <= 4-bit weights no longer: at 16 tokens since
  // planner v53 (sweep dk at 18ba0eb, groups of 128, after the 16-token
  // steps went in pairs: 28672 x 8192 unsplit 36.9-37.1 µs at M = 16
  // against 38.9-39.1 for the 256-row k-major tile, M = 9 36.4 against
  // 38.3-38.6; 8192 x 28672 in 4 splits 35.0-35.1 against 35.6-35.8;
  // bench/results/tile-sweep-dk-18ba0eb.md), at 8 and 32 since planner v54
  // (sweep dl at ae4534f, each line twice: 8x128x256 s4 on 28672 x 8192
  // unsplit 32.8 / 33.1-33.4 µs at M = 1 / 8 against 33.7 / 34.3 for the
  // k-major 8x256x128 in 2 splits, on 8192 x 28672 in 4 splits 31.4 / 31.7
  // against 31.9 / 32.1-32.2 for it in 8; 32x128x256 s3 unsplit 44.0 / 45.1-
  // 45.3 at M = 17 / 32 against 46.0-46.2 / 46.5-46.9 for 32x128x128 s4,
  // in 4 splits 42.2 / 43.2 against 43.9-44.1 / 44.4;
  // bench/results/tile-sweep-dl-ae4534f.md). Other group sizes, zero points
  // and formats with group scales take it unmeasured, as they take the
  // group-128 rules elsewhere; channel-wise, 2-D and tensor scales keep the
  // limit, and so do 8-bit weights at 8 tokens (unmeasured with bf16).
  const bool long_splits_for_bf16 =
      !eight_bit && spec.granularity == ScaleGranularity::kGroup;
  const bool limited_to_8_tiles =
      (spec.activation_type == DataType::kBf16 && !long_splits_for_bf16) ||
      HasGroupsOf32(spec);
  const bool long_splits_lose =
      limited_to_8_tiles && k_tiles > 8 * candidate.splits;
  const bool short_splits = range.tokens > 8 && k_tiles < 4 * candidate.splits;
  if (!fills_the_wave || long_splits_lose || short_splits) {
    return std::nullopt;
  }
  // The 8-bit tile is the one the sweeps ran, and the small layers' 8-bit
  // 8-token tile: the launch bounds of four per SM (64 registers), while
  // its shared memory (four 18 KB stages) lets two reside.
  std::optional<GemmTileConfig> tile = NarrowDecodeTile(
      range.tokens, block_k, /*stages=*/range.tokens == 32 ? 3 : 4,
      /*blocks_per_sm=*/eight_bit ? 4 : 2, kTwoBlocksSharedBytes, spec, shape,
      smem_limit);
  if (!tile.has_value()) return std::nullopt;
  candidate.tile = *tile;
  const bool splits_under_8_tiles =
      candidate.splits > 1 && k_tiles < 8 * candidate.splits;
  // Groups of 32 take the half tile on splits of 8 k-tiles too, where it
  // beat the k-split tile (planner v36; 8192 x 8192, 4 splits, against
  // 8x32x1024: fp16 M = 1 / 2 / 4 / 8 10.99 / 11.07 / 11.15 / 11.33 µs
  // against 11.31 / 11.37 / 11.50 / 11.97, sweep bs, and 10.96 / 11.33
  // against 11.31 / 11.97 at M = 1 / 8 in sweep br; bf16 11.48 / 11.79
  // against 11.89 / 12.54; groups of 64 and 128 keep the k-split tile,
  // faster at M <= 4).
  const bool half_tile_splits =
      splits_under_8_tiles || (HasGroupsOf32(spec) && candidate.splits > 1);
  if (range.tokens == 8 && !eight_bit && half_tile_splits) {
    if (std::optional<GemmTileConfig> half_tile = OneWarpgroupHalfTile(
            *tile, /*blocks_per_sm=*/4, kFourBlocksSharedBytes, spec, shape,
            smem_limit)) {
      candidate.tile = *half_tile;
    }
  }
  return candidate;
}

// 16 KB k-tiles (WideBlockK) in 128-row blocks, two per SM: on the small
// layers at 8 and 16 tokens in splits of two k-tiles (4-bit weights), else
// in long splits (LongSplitTileCandidate).
std::optional<DecodeCandidate> WideKTileCandidate(const DecodeRange& range,
                                                  const QuantSpec& spec,
                                                  const LayerShape& shape,
                                                  int sm_count,
                                                  int smem_limit) {
  const int block_k = WideBlockK(spec);
  if (block_k == 0 || shape.n % 128 != 0 || shape.k % block_k != 0) {
    return std::nullopt;
  }
  if (spec.weight.bits <= 4) {
    if (std::optional<DecodeCandidate> short_splits =
            K256ShortSplitCandidate(range, spec, shape, sm_count, smem_limit)) {
      return short_splits;
    }
  }
  return LongSplitTileCandidate(range, spec, shape, sm_count, smem_limit,
                                block_k);
}

// 256-row tiles read their scales k-major (layout=kmajor) where the kernel
// can (KMajorScaleSourceOf): against the same tile and splits
// (bench/results/tile-sweep-e24ce42.md, M = 1 unless said), W4 fp16
// 28672 x 8192 8x256x128 with 2 splits 32.73 against 33.81 µs (-3.2%),
// bf16 35.67 against 36.50; 8192 x 28672 8x256x128 with 8 splits 31.30
// against 32.01, 16x256x128 at M = 16 35.22 against 36.44 (-3.3%);
// 8192 x 8192 16x256x128 at M = 16 14.24 against 14.42; groups of 32 on
// 8192 x 8192 8x256x128 13.05 against 13.82 (-5.6%); uint8 8192 x 8192
// 8x256x64 s5 19.82 against 20.01. 128-row tiles lost with it: 8192 x 8192
// 8x128x128 four per SM 11.88 against 11.68 (+1.7%), bf16 12.89 against
// 12.68, 4096 x 4096 8x128x128 s8 5.98 against 5.76 (+3.8%). All of these
// are two-warpgroup tiles (two 128-row blocks per warpgroup); on the 256-row
// sixteen-warp 8-bit tile (kernels/gemm_decode_sixteen_warps.h) k-major
// scales did not pay (sweep df: uint8 28672 x 8192 80.7 against 79.3 µs,
// e4m3 8192 x 28672 74.2 against 74.9).
bool KMajorScalesWin(const GemmTileConfig& tile, const QuantSpec& spec,
                     const LayerShape& shape) {
  return tile.block_n == 256 && tile.warps_n == 8 &&
         TileCanReadKMajorScales(tile, spec, shape.k);
}

}  // namespace

absl::StatusOr<std::vector<PlanEntry>> PlanWgmmaDecode(const QuantSpec& spec,
                                                       const LayerShape& shape,
                                                       int sm_count,
                                                       int smem_limit,
                                                       uint32_t launch_abi) {
  std::vector<PlanEntry> entries;
  for (const DecodeRange& range : kDecodeRanges) {
    // One 64-row block per warpgroup (BN 128): its 32-token and 64-token
    // tiles hold half the accumulators of two blocks, keep deferred scales
    // and two blocks per SM, and took 30-40% less time (8192 x 8192: 17.8
    // vs 27.2 µs at M = 32, 22.8 vs 30.1 at M = 64). At 8 and 16 tokens
    // two blocks per warpgroup (BN 256) halve the per-step fence / commit /
    // wait and activation re-reads per weight and won on the large layers
    // (8192 x 8192 M = 1: 13.4 vs 14.6 µs) unless the narrower tile fills
    // the SMs clearly better (4096 x 4096: 5.9 vs 7.3 µs) or, for 4-bit
    // weights at 16 tokens, the splits are short.
    ASSIGN_OR_RETURN(
        DecodeCandidate chosen,
        MakeDecodeCandidate(range, 1, spec, shape, sm_count, smem_limit));
    // Weights wider than 4 bits stay in 128-row blocks at 16 tokens: a
    // 256-row tile of 128 columns holds only 3 stages (measured with 8-bit:
    // 8192 x 8192 uint8 29.1 µs).
    // Nor at 8 tokens on the small layers (MakeDecodeCandidate).
    const bool wide_may_win =
        shape.n % 256 == 0 && ((range.tokens == 8 && (spec.weight.bits <= 4 ||
                                                      !IsSmallLayer(shape))) ||
                               (range.tokens == 16 && spec.weight.bits <= 4));
    // A wide tile that does not fit the shared memory leaves the narrow one.
    std::optional<DecodeCandidate> wide;
    if (wide_may_win) {
      absl::StatusOr<DecodeCandidate> candidate =
          MakeDecodeCandidate(range, 2, spec, shape, sm_count, smem_limit);
      if (candidate.ok()) wide = *candidate;
    }
    if (wide.has_value()) {
      // 4-bit weights at 16 tokens: the 256-row tile wins only on long
      // splits (8192 x 28672, 28 k-tiles: 38.4 against 40.7 µs; 4096 x
      // 14336, 7 k-tiles: 15.2 against 14.2).
      const bool long_enough =
          range.tokens == 8 || shape.k / wide->tile.block_k / wide->splits >= 8;
      if (long_enough && chosen.score <= 1.05 * wide->score) chosen = *wide;
    }
    // At 8 tokens bf16 activations keep a 256-row tile on the large layers:
    // 8192 x 8192 12.18 µs with k-major scales against 12.60 four per SM
    // (fp16: 12.11 against 11.70; bench/results/tile-sweep-e24ce42.md,
    // sweep k). On the small ones four per SM won for bf16 too (4096 x
    // 14336: 11.94 against 12.02). Only the 256-row tile was measured
    // against it, so a 128-row choice still gives way (and on long splits
    // the long-split tile of WideKTileCandidate below replaces it for bf16
    // in group scales since planner v54).
    const bool keeps_wide_tile =
        range.tokens == 8 && spec.activation_type == DataType::kBf16 &&
        !IsSmallLayer(shape) && chosen.tile.block_n == 256;
    for (const PackedTileRule& rule :
         {kFourPerSm8Tokens, kThreePerSm16Tokens}) {
      if (keeps_wide_tile && rule.tokens == 8) continue;
      if (std::optional<DecodeCandidate> packed = PackedTileCandidate(
              rule, range, spec, shape, sm_count, smem_limit)) {
        chosen = *packed;
      }
    }
    // On layers wider than a wave (planner v26), unsplit, the 16 KB k-tile
    // tiles beat the plain 128-row ones (57344 x 8192, sweep at: fp16 M = 1
    // 63.5 against 70.2 µs, M = 16 74.1 / 78.0, M = 32 92.6 / 96.1; uint8
    // M = 1 122.3 for 8x128x128 s8 against 129.0 for the v25 plan's 8x128x64
    // s11 in four splits), but with <= 4-bit weights a 256-row tile reading
    // k-major scales (planned at 8 and 16 tokens) beat them (sweep au: fp16 M =
    // 1 58.5 against 62.7, M = 16 67.0 against 73.5; bf16 M = 1 63.8 against
    // 69.2; 128256 x 4096, sweep at: M = 1 64.5 against 66.9, M = 16 72.0
    // against 77.1), so that tile stays where the range has it. 8-bit weights
    // at 8 tokens take them (uint8 8x128x128 s4 117.3 against 126.5 for the
    // k-major 8x256x64, sweep au; e4m3 and the other 8-bit specs unmeasured
    // there). Groups of 32 keep their limit of 8 k-tiles per split
    // (LongSplitTileCandidate), which rules them out wherever K > 2048; bf16
    // with group scales and <= 4-bit weights is no longer ruled out since
    // planners v53 (16 tokens) and v54 (8 and 32; sweeps dk and dl,
    // measured on 28672 x 8192 and 8192 x 28672, narrower than a wave), so
    // it takes them where no k-major tile is kept here (unmeasured past a
    // wave).
    // bench/results/tile-sweep-decode-wide.md.
    const bool keeps_wide_k_major_tile =
        spec.weight.bits <= 4 && shape.n / 128 > int64_t{2} * sm_count &&
        KMajorScalesWin(chosen.tile, spec, shape);
    if (std::optional<DecodeCandidate> wide_k =
            WideKTileCandidate(range, spec, shape, sm_count, smem_limit);
        wide_k.has_value() && !keeps_wide_k_major_tile) {
      chosen = *wide_k;
    }
    // Groups of 32 past K = 4096 keep the long-split tile's 64-row half
    // where they have it (planner v36, LongSplitTileCandidate): it beat the
    // k-split tile on 8192 x 8192. Where it does not fit (zero points, fp32
    // scales) or N takes no 128-row tile, they take the k-split tile as
    // group 128 does.
    const bool keeps_half_tile = HasGroupsOf32(spec) && shape.k > 4096 &&
                                 chosen.tile.warps_n == 4 &&
                                 chosen.tile.blocks_per_sm == 4;
    // Only a client that reads ksplit=S tile texts can load them (its
    // loader parses the text, whatever the token count).
    if (launch_abi >= kLaunchAbiKSplitTiles && !keeps_half_tile) {
      if (std::optional<GemmTileConfig> k_split =
              KSplitWarpTile(range.tokens, spec, shape, sm_count, smem_limit)) {
        chosen = DecodeCandidate{*k_split, /*splits=*/1, /*score=*/0.0};
      }
    }
    // 32 and 64 tokens in short splits: half the rows, half the splits
    // (kernels/gemm_decode_short_splits.h, planner v44).
    if (std::optional<SplitTile> half = ShortSplitHalfTile(
            chosen.tile, chosen.splits, spec, shape, smem_limit)) {
      chosen.tile = half->tile;
      chosen.splits = half->splits;
    } else if (std::optional<SplitTile> three_per_sm =
                   ThreePerSmHalfTile(chosen.tile, chosen.splits, spec, shape,
                                      sm_count, smem_limit)) {
      // Layers whose 16- or 32-token tile is one of these two in short
      // splits (planners v46-v48: measured on 6144 x 4096, where since v60
      // 4-bit groups of 128 and 64, since v64 8-bit weights with fp16
      // activations at 32 tokens, and since v69 the 4-bit classes of
      // WarpgroupSliceTile (kernels/gemm_decode_ksplit.cc) take warpgroup
      // k-slices instead).
      chosen.tile = three_per_sm->tile;
      chosen.splits = three_per_sm->splits;
    } else if (std::optional<SplitTile> prescaled_half =
                   ShortSplitPrescaledHalfTile(chosen.tile, chosen.splits, spec,
                                               shape, smem_limit)) {
      // 8-bit weights at 64 tokens in short splits (planner v51).
      chosen.tile = prescaled_half->tile;
      chosen.splits = prescaled_half->splits;
    } else if (std::optional<SplitTile> long_split_half =
                   EightBitLongSplitHalfTile(chosen.tile, chosen.splits, spec,
                                             shape, sm_count, smem_limit)) {
      // 8-bit weights at 16 and 32 tokens in many long splits (planner v52).
      chosen.tile = long_split_half->tile;
      chosen.splits = long_split_half->splits;
    }
    // 8-bit weights at 64 tokens in long splits: one sixteen-warp block per
    // SM (kernels/gemm_decode_sixteen_warps.h, planners v49 / v50).
    if (std::optional<SplitTile> sixteen_warps = SixteenWarpEightBitTile(
            chosen.tile, spec, shape, sm_count, smem_limit)) {
      chosen.tile = sixteen_warps->tile;
      chosen.splits = sixteen_warps->splits;
    }
    // Groups of 32 on the 32-token slices and groups of 32 and 64 at 64
    // tokens (with fp16 integer zero points groups of 32), and fp16 groups of
    // 128 at 64 tokens in unequal splits: pre-scaled operands (planners
    // v69-v74, v77, kernels/gemm_decode_tile_options.h).
    if (PrescaledScalesWin(chosen.tile, spec) ||
        PrescaledOnUnevenSplitsWin(chosen.tile, chosen.splits, spec, shape)) {
      chosen.tile.prescaled_scales = true;
    }
    // Only a client that passes the k-major copy as GemmArgs::scales can
    // launch it.
    chosen.tile.k_major_scales =
        launch_abi >= kLaunchAbiKMajorScales &&
        (KMajorScalesWin(chosen.tile, spec, shape) ||
         KMajorScalesOnLongSplitsWin(chosen.tile, chosen.splits, spec, shape,
                                     sm_count));
    // The weights' copy path (kernels/gemm_decode_tile_options.h): bulk
    // copies any client can launch; warp-run slots only one that reads
    // copy=warprun texts.
    chosen.tile.bulk_weights =
        BulkWeightsWin(chosen.tile, chosen.splits, spec, shape);
    chosen.tile.warp_run_weights =
        launch_abi >= kLaunchAbiWarpRunWeights &&
        WarpRunWeightsWin(chosen.tile, chosen.splits, spec, shape);
    // Likewise only a client that reads early=N tile texts.
    const std::optional<int64_t> early_from =
        launch_abi >= kLaunchAbiEarlyTiles
            ? EarlyFirstTileFrom(chosen.tile, chosen.splits, spec, shape,
                                 range.m_min)
            : std::nullopt;
    int64_t m_min = range.m_min;
    if (early_from.has_value() && *early_from <= range.m_max) {
      if (*early_from > m_min) {
        entries.push_back(MakeGemmPlanEntry(m_min, *early_from - 1, chosen.tile,
                                            spec, shape, chosen.splits,
                                            smem_limit));
        m_min = *early_from;
      }
      chosen.tile.early_tiles = 1;
    }
    entries.push_back(MakeGemmPlanEntry(m_min, range.m_max, chosen.tile, spec,
                                        shape, chosen.splits, smem_limit));
  }
  return entries;
}

}  // namespace hummingd
