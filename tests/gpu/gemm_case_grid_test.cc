// The GEMM GPU suite's cases (gemm_cases.h) checked without a GPU, so that
// CI checks them: every case is a legal, plannable layer whose M values
// reach every range of its plan, and the decode variants reach every wgmma
// range and the tiles the suite must cover.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "kernels/gemm_config.h"
#include "kernels/gpu_target.h"
#include "kernels/k_major_scales.h"
#include "kernels/launch_abi.h"
#include "kernels/layer_shape.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"
#include "tests/gpu/gemm_cases.h"
#include "tests/gpu/gemm_support.h"

namespace hummingd::gpu::testing {
namespace {

// The grid itself, without a GPU (so CI checks it): every case is a legal,
// plannable GEMM layer, and its M values reach every range of the plan.
TEST(GemmCaseGridTest, EveryCaseIsPlannableAndCoversItsRanges) {
  absl::StatusOr<GpuTarget> gpu = ParseGpuArch("sm_90a");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  for (const GemmCase& c : CoveringCases()) {
    SCOPED_TRACE(::testing::Message()
                 << c.spec << " n=" << c.n << " k=" << c.k);
    absl::StatusOr<QuantSpec> spec = ParseSpecText(c.spec);
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_TRUE(ValidateSpec(*spec).ok()) << ValidateSpec(*spec);
    KernelRequest request;
    request.family = KernelFamily::kGemm;
    request.spec = *spec;
    request.shape.n = c.n;
    request.shape.k = c.k;
    request.gpu = *gpu;
    request.launch_abi = kCurrentLaunchAbi;
    const absl::Status shape =
        ValidateShape(*spec, request.shape, request.family, ShapeLimits{});
    EXPECT_TRUE(shape.ok()) << shape;
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::vector<bool> range_hit(plan->entries.size(), false);
    for (int64_t m : MValues(c.m_set)) {
      absl::StatusOr<const PlanEntry*> entry = GemmEntryForM(*plan, m);
      ASSERT_TRUE(entry.ok()) << entry.status();
      range_hit[*entry - plan->entries.data()] = true;
    }
    if (c.m_set != kLarge) {
      for (size_t i = 0; i < range_hit.size(); ++i) {
        EXPECT_TRUE(range_hit[i]) << "range " << i << " not exercised";
      }
    }
  }
}

// The decode variants reach every decode (M <= 64) range of their sm_90a
// plan.
TEST(GemmCaseGridTest, DecodeCasesCoverEveryWgmmaRange) {
  absl::StatusOr<GpuTarget> gpu = ParseGpuArch("sm_90a");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  const std::vector<GemmCase> cases = DecodeCases();
  ASSERT_GT(cases.size(), 40u);
  int split_plans = 0;
  for (const GemmCase& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.spec << " n=" << c.n << " k=" << c.k);
    KernelRequest request;
    request.family = KernelFamily::kGemm;
    absl::StatusOr<QuantSpec> spec = ParseSpecText(c.spec);
    ASSERT_TRUE(spec.ok()) << spec.status();
    request.spec = *spec;
    request.shape.n = c.n;
    request.shape.k = c.k;
    request.gpu = *gpu;
    request.launch_abi = kCurrentLaunchAbi;
    EXPECT_TRUE(
        ValidateShape(*spec, request.shape, request.family, ShapeLimits{})
            .ok());
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    int wgmma_ranges_hit = 0;
    int wgmma_ranges = 0;
    std::vector<bool> hit(plan->entries.size(), false);
    for (int64_t m : MValues(c.m_set)) {
      absl::StatusOr<const PlanEntry*> entry = GemmEntryForM(*plan, m);
      ASSERT_TRUE(entry.ok()) << entry.status();
      hit[*entry - plan->entries.data()] = true;
    }
    // (The 64-token tiles above M = 64 run in the Formats cases.)
    for (size_t i = 0; i < plan->entries.size(); ++i) {
      if (plan->entries[i].config.skeleton != kGemmWgmmaSkeleton ||
          plan->entries[i].m_max > 64) {
        continue;
      }
      ++wgmma_ranges;
      if (hit[i]) ++wgmma_ranges_hit;
    }
    // Four ranges, one of them in two entries where its tile takes early=1
    // from M = 6 (planner v40).
    EXPECT_GE(wgmma_ranges, 4);
    EXPECT_LE(wgmma_ranges, 5);
    EXPECT_EQ(wgmma_ranges_hit, wgmma_ranges);
    split_plans += wgmma_ranges == 5;
  }
  // Some case runs both entries of a split range on the GPU (uint8 / e4m3
  // 4096 x 4096 at planner v40).
  EXPECT_GE(split_plans, 1);
  // The real layers reach the wide tiles, at 8 tokens and at 16, the tiles
  // that run four (8 tokens) and three (16 tokens) blocks per SM, and
  // k-major scales both from a transposed copy (groups) and from the
  // checkpoint tensor (channel-wise), and planner v18's 32-token 256-column
  // tiles and 8-bit 8-token long splits on a large layer.
  int wide_k_32 = 0;
  int w8_long_splits = 0;
  int k_split_4bit = 0;
  int k_split_8bit = 0;
  int k_split_long_k = 0;
  int k_split_long_k_8bit = 0;
  int k_split_16_tokens = 0;
  int k_split_four_per_sm = 0;
  int k_split_three_per_sm = 0;
  int k_split_16_tokens_bf16 = 0;
  int k_split_k16384 = 0;
  int k_split_sixteen_warps = 0;
  int wide = 0;
  int wide_16 = 0;
  int four_per_sm = 0;
  int three_per_sm = 0;
  int k_major_copy = 0;
  int k_major_checkpoint = 0;
  int wider_than_a_wave_unsplit = 0;
  int bulk_weights = 0;
  int warp_run_weights = 0;
  for (const GemmCase& c : cases) {
    KernelRequest request;
    request.family = KernelFamily::kGemm;
    request.spec = *ParseSpecText(c.spec);
    request.shape.n = c.n;
    request.shape.k = c.k;
    request.gpu = *gpu;
    request.launch_abi = kCurrentLaunchAbi;
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    // Only the entries the case's token counts launch count as covered (a
    // plan's prefill entries do not run in the decode cases).
    std::vector<bool> launched(plan->entries.size(), false);
    for (int64_t m : MValues(c.m_set)) {
      absl::StatusOr<const PlanEntry*> entry = GemmEntryForM(*plan, m);
      ASSERT_TRUE(entry.ok()) << entry.status();
      launched[*entry - plan->entries.data()] = true;
    }
    for (size_t i = 0; i < plan->entries.size(); ++i) {
      if (!launched[i]) continue;
      const PlanEntry& entry = plan->entries[i];
      absl::StatusOr<GemmTileConfig> tile =
          ParseGemmTileText(entry.config.text);
      ASSERT_TRUE(tile.ok()) << tile.status();
      if (tile->mma != GemmMma::kWgmma) continue;
      wide += tile->block_n == 256 ? 1 : 0;
      bulk_weights += tile->bulk_weights;
      warp_run_weights += tile->warp_run_weights;
      wide_k_32 += tile->block_m == 32 && tile->block_k == 256;
      k_split_4bit += tile->warp_split_k > 1 && request.spec.weight.bits <= 4;
      k_split_8bit += tile->warp_split_k > 1 && request.spec.weight.bits == 8;
      k_split_long_k += tile->warp_split_k > 1 && request.shape.k > 4096;
      k_split_long_k_8bit += tile->warp_split_k > 1 && request.shape.k > 4096 &&
                             request.spec.weight.bits == 8;
      k_split_16_tokens += tile->warp_split_k > 1 && tile->block_m == 16;
      k_split_four_per_sm +=
          tile->warp_split_k > 1 && WgmmaBlocksPerSm(*tile) == 4;
      k_split_three_per_sm += tile->warp_split_k > 1 && tile->block_m == 16 &&
                              WgmmaBlocksPerSm(*tile) == 3;
      k_split_16_tokens_bf16 += tile->warp_split_k > 1 && tile->block_m == 16 &&
                                request.spec.activation_type == DataType::kBf16;
      k_split_k16384 += tile->warp_split_k > 1 && request.shape.k == 16384;
      k_split_sixteen_warps += tile->warp_split_k > 1 && tile->warps_n == 16 &&
                               WgmmaBlocksPerSm(*tile) == 1;
      w8_long_splits += request.spec.weight.bits == 8 && tile->block_m == 8 &&
                        tile->block_n == 128 &&
                        request.shape.n * request.shape.k >= 8192 * 8192;
      wide_16 += tile->block_n == 256 && tile->block_m == 16 ? 1 : 0;
      // The 4-bit four-per-SM tile (8-bit 8-token tiles on small layers
      // share its text and launch bounds, but their shared memory admits
      // only two).
      four_per_sm += WgmmaBlocksPerSm(*tile) == 4 && entry.launch.grid_z > 1 &&
                     request.spec.weight.bits <= 4;
      three_per_sm += tile->blocks_per_sm == 3 && entry.launch.grid_z > 1;
      wider_than_a_wave_unsplit += request.shape.n / 128 > 2 * 132 &&
                                   entry.launch.grid_z == 1 &&
                                   entry.launch.grid_y > 132;
      if (tile->k_major_scales) {
        const KMajorScaleSource source = KMajorScaleSourceOf(request.spec);
        k_major_copy += source == KMajorScaleSource::kCopy;
        k_major_checkpoint += source == KMajorScaleSource::kCheckpoint;
      }
    }
  }
  EXPECT_GE(wide_k_32, 1);
  EXPECT_GE(k_split_4bit, 2);
  EXPECT_GE(k_split_8bit, 2);
  EXPECT_GE(k_split_long_k, 1);
  EXPECT_GE(k_split_long_k_8bit, 2);
  EXPECT_GE(k_split_16_tokens, 2);
  EXPECT_GE(k_split_four_per_sm, 1);
  EXPECT_GE(k_split_three_per_sm, 1);
  EXPECT_GE(k_split_16_tokens_bf16, 1);
  EXPECT_GE(k_split_k16384, 1);
  EXPECT_GE(k_split_sixteen_warps, 1);
  EXPECT_GE(w8_long_splits, 1);
  EXPECT_GE(wide, 4);
  EXPECT_GE(wide_16, 1);
  EXPECT_GE(four_per_sm, 1);
  EXPECT_GE(three_per_sm, 1);
  EXPECT_GE(k_major_copy, 1);
  EXPECT_GE(k_major_checkpoint, 1);
  EXPECT_GE(wider_than_a_wave_unsplit, 8);
  // Both weight copy paths planner v43 adds run on the GPU.
  EXPECT_GE(bulk_weights, 1);
  EXPECT_GE(warp_run_weights, 1);
}

}  // namespace
}  // namespace hummingd::gpu::testing
