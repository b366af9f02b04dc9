// GEMM planner tables: deterministic, contiguous, grid arithmetic that
// covers the layer, shared memory within the device limit, workspace a pure
// function of (entry, M); and the repack plan.

#include <cstdint>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/gemm_config.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

using testing::GemmRequest;

constexpr const char* kW4 = "weight=uint4,group=128,scale=fp16";

TEST(GemmPlannerTest, TablesAreDeterministicContiguousAndCoverTheLayer) {
  for (const char* arch : {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90a"}) {
    for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096},
                        {64, 128},
                        {6144, 4096},
                        {14336, 4096},
                        {48, 256}}) {
      SCOPED_TRACE(::testing::Message() << arch << " N=" << n << " K=" << k);
      const KernelRequest request = GemmRequest(kW4, n, k, arch);
      absl::StatusOr<Plan> plan = PlanKernels(request);
      ASSERT_TRUE(plan.ok()) << plan.status();
      absl::StatusOr<Plan> again = PlanKernels(request);
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(*plan, *again);
      ASSERT_FALSE(plan->entries.empty());
      EXPECT_EQ(plan->entries.front().m_min, 1);
      EXPECT_EQ(plan->entries.back().m_max, kDefaultMaxM);
      // The arch's opt-in figure less the kernels' static bytes.
      const int smem_limit = (request.gpu.sm == 75   ? 65536
                              : request.gpu.sm == 90 ? 232448
                                                     : 101376) -
                             kGemmStaticSharedBytes;
      std::set<std::string> configs;
      for (size_t i = 0; i < plan->entries.size(); ++i) {
        const PlanEntry& entry = plan->entries[i];
        if (i > 0) {
          EXPECT_EQ(entry.m_min, plan->entries[i - 1].m_max + 1);
        }
        EXPECT_LE(entry.m_min, entry.m_max);
        absl::StatusOr<GemmTileConfig> tile =
            ParseGemmTileText(entry.config.text);
        ASSERT_TRUE(tile.ok()) << tile.status();
        EXPECT_EQ(entry.config.skeleton, tile->Skeleton());
        // wgmma only on Hopper: the decode tiles up to M = 64, the 64-token
        // ones above it on layers of whole 128-row and 128-column tiles.
        if (tile->mma == GemmMma::kWgmma) {
          EXPECT_EQ(request.gpu.sm, 90);
          EXPECT_TRUE(entry.m_max <= 64 || (n % 128 == 0 && k % 128 == 0))
              << entry.config.text;
        }
        EXPECT_EQ(FormatGemmTileText(*tile), entry.config.text);
        EXPECT_TRUE(ValidateGemmTile(*tile, n, k).ok());
        configs.insert(entry.config.text);
        // grid = (ceil(M / BM), N / BN, splits) covers every output tile.
        EXPECT_EQ(entry.launch.grid_x, 1);
        EXPECT_EQ(entry.launch.m_per_block_x, tile->block_m);
        EXPECT_EQ(entry.launch.grid_y * tile->block_n, n);
        EXPECT_GE(entry.launch.grid_z, 1);
        EXPECT_LE(entry.launch.grid_z, k / tile->block_k);
        EXPECT_EQ(entry.launch.block_x, tile->Threads());
        EXPECT_EQ(entry.config.threads_per_block, tile->Threads());
        // wgmma tiles ask for enough to keep their planned residency
        // (gemm_decode_plan_test checks how much).
        if (tile->mma == GemmMma::kWgmma) {
          EXPECT_GE(entry.launch.dynamic_shared_memory,
                    tile->SharedBytes(request.spec));
        } else {
          EXPECT_EQ(entry.launch.dynamic_shared_memory,
                    tile->SharedBytes(request.spec));
        }
        EXPECT_LE(entry.launch.dynamic_shared_memory, smem_limit);
        // Workspace: only with split-K, linear in the number of m-blocks.
        const int64_t m = entry.m_max == kDefaultMaxM ? 5000 : entry.m_max;
        const int64_t m_blocks = (m + tile->block_m - 1) / tile->block_m;
        if (entry.launch.grid_z == 1) {
          EXPECT_EQ(GemmWorkspaceBytes(entry, m), 0);
          EXPECT_EQ(GemmCounterBytes(entry, m), 0);
        } else {
          EXPECT_EQ(GemmWorkspaceBytes(entry, m),
                    entry.launch.grid_z * m_blocks * tile->block_m * n * 4);
          EXPECT_EQ(GemmWorkspaceBytes(entry, m),
                    m_blocks * entry.launch.workspace_bytes_per_m_block);
          // One counter per (m16, n16) tile origin, whatever the config.
          EXPECT_EQ(GemmCounterBytes(entry, m),
                    m_blocks * ((tile->block_m + 15) / 16) * (n / 16) * 4);
        }
      }
      // Several ranges share a cubin.
      EXPECT_LT(configs.size(), plan->entries.size());
    }
  }
}

TEST(GemmPlannerTest, SmallMSplitsKToFillTheMachine) {
  KernelRequest request = GemmRequest(kW4, 8192, 8192);
  request.gpu.sm_count = 132;
  absl::StatusOr<Plan> plan = PlanKernels(request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const PlanEntry& small = plan->entries.front();
  // At least 90% of the SMs get a block: at 8 tokens by k-split warps over
  // 256 32-row blocks (planner v20), at 16 by one 64-row block per SM whose
  // warpgroups split K (128 blocks, unsplit: planner v57).
  EXPECT_GE(small.launch.grid_y * small.launch.grid_z, 0.9 * 132);
  const PlanEntry& sixteen = plan->entries[1];
  EXPECT_EQ(sixteen.m_max, 16);
  EXPECT_GE(sixteen.launch.grid_y * sixteen.launch.grid_z, 0.9 * 132);
  EXPECT_EQ(sixteen.launch.grid_y, 128);
  EXPECT_EQ(sixteen.launch.grid_z, 1);
  EXPECT_EQ(plan->entries.back().launch.grid_z, 1);
  // The SM count is keyed because it changes the plan.
  request.gpu.sm_count = 16;
  absl::StatusOr<Plan> smaller = PlanKernels(request);
  ASSERT_TRUE(smaller.ok());
  EXPECT_NE(*plan, *smaller);
  EXPECT_NE(
      PlannerGpuFields(KernelFamily::kGemm, request.gpu).find("sm_count=16"),
      std::string::npos);
}

TEST(GemmPlannerTest, RefusesWhatItCannotPlan) {
  KernelRequest moe = GemmRequest(kW4, 4096, 4096);
  moe.shape.kind = GemmKind::kMoeIndexed;
  moe.shape.experts = 8;
  moe.shape.top_k = 2;
  EXPECT_EQ(PlanKernels(moe).status().code(), absl::StatusCode::kUnimplemented);
  KernelRequest fp8 =
      GemmRequest("weight=uint4,group=128,scale=fp16,act=e4m3,act_scale=token",
                  4096, 4096, "sm_90a");
  ASSERT_TRUE(ValidateSpec(fp8.spec).ok()) << ValidateSpec(fp8.spec);
  EXPECT_EQ(PlanKernels(fp8).status().code(), absl::StatusCode::kUnimplemented);
  absl::Status bf16_turing =
      PlanKernels(GemmRequest("weight=uint4,group=128,scale=fp16,act=bf16", 256,
                              256, "sm_75"))
          .status();
  EXPECT_EQ(bf16_turing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bf16_turing.message().find("gpu.arch"), std::string::npos);
  absl::Status odd_n = PlanKernels(GemmRequest(kW4, 136, 256)).status();
  EXPECT_EQ(odd_n.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(odd_n.message().find("shape"), std::string::npos);
  EXPECT_FALSE(PlanKernels(GemmRequest(kW4, 128, 96)).ok());
}

// The planner checks what it is given (tools call it without the server's
// validation): a group of 0 divided by zero, a group of 100 and an absurd N
// gave plans of kernels that cannot exist.
TEST(GemmPlannerTest, RefusesUnvalidatedRequests) {
  KernelRequest request = GemmRequest(kW4, 4096, 4096);
  request.spec.group_size = 0;
  EXPECT_EQ(PlanKernels(request).status().code(),
            absl::StatusCode::kInvalidArgument);
  request.spec.group_size = 100;
  EXPECT_EQ(PlanKernels(request).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanRepack(request).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status huge =
      PlanKernels(GemmRequest(kW4, int64_t{1} << 62, 128, "sm_80")).status();
  EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(huge.message().find("shape.n"), std::string::npos) << huge;
  KernelRequest dequant = GemmRequest(kW4, 4096, 4096);
  dequant.family = KernelFamily::kDequant;
  dequant.shape.k = 4100;
  EXPECT_EQ(PlanKernels(dequant).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// wgmma exists only in sm_90a's arch-specific feature set: plain sm_90 gets
// the mma.sync kernels, and codegen refuses a wgmma tile for it.
TEST(GemmPlannerTest, PlainSm90GetsNoWgmmaKernels) {
  const KernelRequest sm90 = GemmRequest(kW4, 4096, 4096, "sm_90");
  absl::StatusOr<Plan> plan = PlanKernels(sm90);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const PlanEntry& entry : plan->entries) {
    EXPECT_EQ(entry.config.skeleton, kGemmSkeleton) << entry.config.text;
  }
  absl::StatusOr<Plan> sm90a = PlanKernels(GemmRequest(kW4, 4096, 4096));
  ASSERT_TRUE(sm90a.ok()) << sm90a.status();
  ASSERT_EQ(sm90a->entries[0].config.skeleton, kGemmWgmmaSkeleton);
  EXPECT_EQ(GenerateStub(sm90, sm90a->entries[0].config).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A reported opt-in above the arch's own would plan kernels that cannot
// launch: the arch's figure bounds it.
TEST(GemmPlannerTest, SharedMemoryAboveTheArchIsClamped) {
  for (const char* arch : {"sm_90a", "sm_75", "sm_86"}) {
    KernelRequest request =
        GemmRequest("weight=uint8,group=128,scale=fp16", 8192, 8192, arch, 132);
    const int arch_limit = GemmSharedMemoryLimit(request.gpu);
    request.gpu.max_shared_memory_per_block_optin = 1 << 30;
    EXPECT_EQ(GemmSharedMemoryLimit(request.gpu), arch_limit) << arch;
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (const PlanEntry& entry : plan->entries) {
      EXPECT_LE(entry.launch.dynamic_shared_memory, arch_limit)
          << arch << " " << entry.config.text;
    }
  }
}

TEST(GemmPlannerTest, RepackPlanCoversEveryLaneChunk) {
  const KernelRequest request = GemmRequest(kW4, 6144, 4096);
  absl::StatusOr<PlanEntry> entry = PlanRepack(request);
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_EQ(entry->config.skeleton, kRepackSkeleton);
  EXPECT_EQ(entry->launch.m_per_block_x, 0);
  EXPECT_EQ(entry->launch.block_x, kRepackThreads);
  const int64_t chunks = (6144 / 16) * (4096 / 64) * 32;
  EXPECT_GE(entry->launch.grid_x * kRepackThreads, chunks);
  EXPECT_LT((entry->launch.grid_x - 1) * kRepackThreads, chunks);
  KernelRequest dequant = request;
  dequant.family = KernelFamily::kDequant;
  EXPECT_FALSE(PlanRepack(dequant).ok());
}

TEST(GemmConfigTextTest, ParsesOnlyTheCanonicalForm) {
  GemmTileConfig tile;
  tile.block_m = 64;
  tile.block_n = 32;
  tile.block_k = 64;
  tile.warps_m = 2;
  tile.warps_n = 1;
  tile.stages = 3;
  const std::string text = FormatGemmTileText(tile);
  EXPECT_EQ(text, "tile=64x32x64,warps=2x1,stages=3");
  absl::StatusOr<GemmTileConfig> parsed = ParseGemmTileText(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, tile);
  for (const char* bad :
       {"", "tile=64x32,warps=2x1,stages=3", "tile=64x32x64,warps=2x1",
        "tile=64x32x64,warps=2x1,stages=03",
        "tile=64x32x64,warps=2x-1,stages=3", "stages=3,tile=64x32x64,warps=2x1",
        "tile=64x32x64,warps=2x1,stages=3,",
        // Numbers past any tile, whose products overflowed int in
        // ValidateGemmTile (16 * warps wrapped to 0, then % 0).
        "tile=16x64x64,warps=1x268435456,stages=4",
        "tile=16x64x64,warps=268435456x1,stages=4",
        "tile=16x1073741824x512,warps=1x16,stages=4,mma=wgmma,ksplit=8",
        "tile=64x32x64,warps=2x1,stages=4097"}) {
    absl::StatusOr<GemmTileConfig> result = ParseGemmTileText(bad);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_FALSE(ValidateGemmTile(tile, 64, 96).ok());  // K % BK
  tile.block_k = 96;
  EXPECT_FALSE(ValidateGemmTile(tile, 64, 192).ok());
}

}  // namespace
}  // namespace hummingd
