// Hopper's M > 64 plan (kernels/gemm_prefill_plan.h): the measured tile
// and split choices on issue 5's layers, the one-block-per-SM rule, and the
// fallback to the mma.sync tiles where the layer or the shared memory does
// not take the 64-token tiles.

#include "kernels/gemm_prefill_plan.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/gemm_config.h"
#include "kernels/gemm_decode_plan.h"
#include "kernels/launch_abi.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

using testing::H200GemmRequest;

// Above M = 64 Hopper runs the wgmma skeleton's tiles: at 65-128 the
// 64-token ones (sweeps ba and bb,
// bench/results/tile-sweep-prefill-a0b7394.md): the 128-row tile two per SM,
// split where its grid is short of the 264 slots. Above 128 the 128-token tile,
// one per SM, wherever 0.9 times its busiest SM's work is at most the 64-token
// grid's (sweeps be, bf, bg, bench/results/tile-sweep-prefill-be-acc4d05.md),
// in grouped block order from M = 513; the 64-token tiles elsewhere: the
// 128-row one, or the 256-row sixteen-warp one where the 128-row one holds one
// block per SM (8-bit weights, 4-bit ones with zero points).
TEST(GemmPrefillPlanTest,
     LargerMOnHopperRunsSixtyFourAndOneTwentyEightTokenTiles) {
  struct Expected {
    const char* spec;
    int64_t n, k;
    // The nine ranges' tiles: 6 = 64x128x128, W = 128x128x128, G = the same
    // in grouped order; the splits of 65-128 and 129-256.
    const char* tiles;
    int64_t splits[2];
  };
  constexpr const char* kW4 = "weight=uint4,group=128,scale=fp16";
  const Expected cases[] = {
      // 384 tokens: two 128-token blocks on the busiest SM against three
      // 64-token ones, i.e. 1.5 of them (measured 115.9 against 98.9 µs).
      {kW4, 8192, 8192, "6W6W6G6GG", {2, 1}},
      {kW4, 8192, 28672, "6W6W6G6GG", {2, 1}},
      {kW4, 4096, 4096, "6WWW66GGG", {4, 2}},
      {kW4, 6144, 4096, "6W66G6GGG", {2, 1}},
      {kW4, 4096, 14336, "6WWW66GGG", {4, 2}},
      // 224 n-blocks: 3.4 waves either way at M = 256.
      {kW4, 28672, 8192, "66WWGGGGG", {1, 1}},
      // Against the 256-row tile, one per SM like the 128-token one.
      {"weight=e4m3,group=128,scale=fp16", 8192, 8192, "6WWWGGGGG", {1, 1}},
      {"weight=uint4,group=128,scale=fp16,zero=int",
       8192,
       8192,
       "6WWWGGGGG",
       {1, 1}},
  };
  for (const Expected& expected : cases) {
    SCOPED_TRACE(::testing::Message() << expected.spec << " N=" << expected.n
                                      << " K=" << expected.k);
    absl::StatusOr<Plan> plan =
        PlanKernels(H200GemmRequest(expected.spec, expected.n, expected.k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_EQ(plan->entries.size(), 13u);
    std::string tiles;
    for (int i = 4; i < 13; ++i) {
      const std::string& text = plan->entries[i].config.text;
      const bool grouped = absl::StrContains(text, "order=grouped");
      if (text == "tile=64x128x128,warps=1x8,stages=4,mma=wgmma") {
        tiles += '6';
      } else if (absl::StartsWith(
                     text, "tile=128x128x128,warps=1x8,stages=4,mma=wgmma")) {
        tiles += grouped ? 'G' : 'W';
        EXPECT_EQ(grouped, plan->entries[i].m_min > 512) << text;
      } else {
        tiles += '?';
        ADD_FAILURE() << "unexpected tile " << text;
      }
    }
    EXPECT_EQ(tiles, expected.tiles);
    EXPECT_EQ(plan->entries[4].launch.grid_z, expected.splits[0]);
    EXPECT_EQ(plan->entries[5].launch.grid_z, expected.splits[1]);
    for (int i = 6; i < 13; ++i) {
      EXPECT_EQ(plan->entries[i].launch.grid_z, 1) << i;
    }
  }
  // A client before launch ABI 3 cannot read the 128-token tiles or
  // grouped order, and keeps planner v28's 64-token tiles.
  absl::StatusOr<Plan> abi2 = PlanKernels(testing::GemmRequest(
      kW4, 8192, 8192, "sm_90a", 132, kLaunchAbiKSplitTiles));
  ASSERT_TRUE(abi2.ok()) << abi2.status();
  ASSERT_EQ(abi2->entries.size(), 13u);
  for (int i = 4; i < 12; ++i) {
    EXPECT_EQ(abi2->entries[i].config.text,
              "tile=64x128x128,warps=1x8,stages=4,mma=wgmma")
        << i;
  }
  EXPECT_EQ(abi2->entries[12].config.text,
            "tile=64x256x128,warps=1x16,stages=3,mma=wgmma");
  // Layers that are not whole 128-row and 128-column tiles keep the
  // mma.sync tiles above M = 64 (N = 192: one 64-row block per warpgroup
  // below it).
  absl::StatusOr<Plan> odd = PlanKernels(
      H200GemmRequest("weight=uint4,group=64,scale=fp16", 192, 256));
  ASSERT_TRUE(odd.ok()) << odd.status();
  ASSERT_EQ(odd->entries.size(), 7u);
  for (size_t i = 4; i < odd->entries.size(); ++i) {
    EXPECT_EQ(odd->entries[i].config.skeleton, kGemmSkeleton);
    EXPECT_FALSE(odd->entries[i].launch.programmatic_dependent_launch);
  }
  absl::StatusOr<Plan> short_k = PlanKernels(
      H200GemmRequest("weight=uint4,group=64,scale=fp16", 4096, 4160));
  ASSERT_TRUE(short_k.ok()) << short_k.status();
  EXPECT_EQ(short_k->entries.back().config.skeleton, kGemmSkeleton);
}

// No client is planned a tile it cannot read: every entry, decode and
// prefill, on every launch ABI, and each ABI step changes some plan.
TEST(GemmPrefillPlanTest, EveryPlannedTileIsLaunchableByTheRequestsAbi) {
  int newest_tiles[kCurrentLaunchAbi + 1] = {};
  for (const char* spec :
       {"weight=uint4,group=128,scale=fp16",
        "weight=uint8,group=128,scale=fp16",
        "weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16"}) {
    for (const auto [n, k] : {std::pair<int64_t, int64_t>{8192, 8192},
                              {4096, 4096},
                              {11776, 8192},
                              {28672, 8192}}) {
      for (uint32_t abi = 0; abi <= kCurrentLaunchAbi; ++abi) {
        absl::StatusOr<Plan> plan =
            PlanKernels(testing::GemmRequest(spec, n, k, "sm_90a", 132, abi));
        ASSERT_TRUE(plan.ok()) << plan.status();
        for (const PlanEntry& entry : plan->entries) {
          if (entry.config.skeleton != kGemmWgmmaSkeleton) continue;
          absl::StatusOr<GemmTileConfig> tile =
              ParseGemmTileText(entry.config.text);
          ASSERT_TRUE(tile.ok()) << tile.status();
          const uint32_t needed = GemmTileLaunchAbi(*tile);
          EXPECT_LE(needed, abi) << spec << " " << entry.config.text;
          if (needed == abi) ++newest_tiles[abi];
        }
      }
    }
  }
  for (uint32_t abi = 1; abi <= kCurrentLaunchAbi; ++abi) {
    EXPECT_GT(newest_tiles[abi], 0) << "launch ABI " << abi;
  }
}

TEST(GemmPrefillPlanTest, ASharedMemoryTooSmallKeepsTheMmaSyncTiles) {
  const KernelRequest request =
      H200GemmRequest("weight=uint8,group=128,scale=fp16", 8192, 8192);
  // The 256-row tile of 8-bit weights needs ~160 KB.
  const std::vector<PlanEntry> small = PlanWgmmaPrefill(
      request.spec, request.shape, 132, 101376, kCurrentLaunchAbi);
  EXPECT_TRUE(small.empty());
  const std::vector<PlanEntry> full =
      PlanWgmmaPrefill(request.spec, request.shape, 132,
                       GemmSharedMemoryLimit(request.gpu), kCurrentLaunchAbi);
  ASSERT_EQ(full.size(), 9u);
  EXPECT_EQ(full.front().m_min, 65);
  EXPECT_EQ(full.back().m_max, kDefaultMaxM);
  for (const PlanEntry& entry : full) {
    EXPECT_LE(entry.launch.dynamic_shared_memory,
              GemmSharedMemoryLimit(request.gpu));
  }
}

}  // namespace
}  // namespace hummingd
