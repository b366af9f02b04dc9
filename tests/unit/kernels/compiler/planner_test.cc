#include "kernels/planner.h"

#include <cstdint>
#include <random>

#include "gtest/gtest.h"
#include "kernels/gpu_target.h"
#include "kernels/plan.h"
#include "kernels/quant_spec.h"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd {
namespace {

// Channel-wise scales: any K that is a multiple of 32 is a valid layer, so
// the grid arithmetic below can range over all of them (the planner
// validates the shape).
KernelRequest DequantRequest(int64_t n, int64_t k, GpuTarget gpu = {}) {
  KernelRequest request;
  request.family = KernelFamily::kDequant;
  request.spec =
      Canonicalize(*ParseSpecText("weight=uint4,group=channel,scale=fp16"));
  request.shape.n = n;
  request.shape.k = k;
  request.gpu = gpu;
  return request;
}

TEST(PlannerTest, DequantIsOneEntryOverEveryM) {
  absl::StatusOr<Plan> plan = PlanKernels(DequantRequest(4096, 4096));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->entries.size(), 1u);
  const PlanEntry& entry = plan->entries[0];
  EXPECT_EQ(entry.m_min, 1);
  EXPECT_EQ(entry.m_max, kDefaultMaxM);
  EXPECT_EQ(entry.config.family, KernelFamily::kDequant);
  EXPECT_EQ(entry.config.skeleton, "dequant");
  EXPECT_EQ(entry.config.text, "threads=256,codes_per_thread=32");
  EXPECT_EQ(entry.config.threads_per_block, 256);
  EXPECT_EQ(entry.config.dynamic_shared_memory, 0);
  EXPECT_EQ(entry.launch.block_x, 256);
  EXPECT_EQ(entry.launch.grid_x, 2048);  // 4096*4096/32/256
  EXPECT_EQ(entry.launch.grid_y, 1);
  EXPECT_EQ(entry.launch.grid_z, 1);
  EXPECT_EQ(entry.launch.m_per_block_x, 0);
  EXPECT_EQ(entry.launch.dynamic_shared_memory, 0);
}

TEST(PlannerTest, GridCoversEveryChunkWithOnePartialBlockAtMost) {
  EXPECT_EQ(PlanKernels(DequantRequest(1, 32))->entries[0].launch.grid_x, 1);
  EXPECT_EQ(PlanKernels(DequantRequest(257, 8192))->entries[0].launch.grid_x,
            257);
  EXPECT_EQ(PlanKernels(DequantRequest(1000, 4128))->entries[0].launch.grid_x,
            504);  // 129000 chunks
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 1000; ++i) {
    const int64_t n = 1 + static_cast<int64_t>(rng() % 20000);
    const int64_t k = 32 * (1 + static_cast<int64_t>(rng() % 2000));
    absl::StatusOr<Plan> plan = PlanKernels(DequantRequest(n, k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    const int64_t chunks = n * k / 32;
    const LaunchParams& launch = plan->entries[0].launch;
    ASSERT_GE(launch.grid_x * launch.block_x, chunks) << n << "x" << k;
    ASSERT_LT((launch.grid_x - 1) * launch.block_x, chunks) << n << "x" << k;
  }
}

TEST(PlannerTest, DeterministicAndIndependentOfGpuDetails) {
  GpuTarget h100{90, true, 132, 232448, "H100"};
  GpuTarget a100{80, false, 108, 166912, "A100"};
  const absl::StatusOr<Plan> first =
      PlanKernels(DequantRequest(512, 1024, h100));
  const absl::StatusOr<Plan> second =
      PlanKernels(DequantRequest(512, 1024, h100));
  const absl::StatusOr<Plan> other =
      PlanKernels(DequantRequest(512, 1024, a100));
  ASSERT_TRUE(first.ok() && second.ok() && other.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(*first, *other);
  EXPECT_EQ(PlannerGpuFields(KernelFamily::kDequant, h100), "arch=sm_90a");
  EXPECT_EQ(PlannerGpuFields(KernelFamily::kDequant, a100), "arch=sm_80");
  h100.sm_count = 114;
  h100.device_name = "H100 PCIe";
  EXPECT_EQ(PlannerGpuFields(KernelFamily::kDequant, h100), "arch=sm_90a");
}

TEST(PlannerTest, RefusesWhatItCannotPlan) {
  // MoE GEMMs are not planned yet (dense GEMMs are: kernels_gemm_test).
  KernelRequest gemm = DequantRequest(4096, 4096);
  gemm.family = KernelFamily::kGemm;
  gemm.shape.kind = GemmKind::kMoeIndexed;
  gemm.shape.experts = 8;
  gemm.shape.top_k = 2;
  EXPECT_EQ(PlanKernels(gemm).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(PlanKernels(DequantRequest(4096, 100)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanKernels(DequantRequest(0, 128)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hummingd
