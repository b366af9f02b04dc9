// Hopper's M > 64 plan (kernels/gemm_prefill_plan.h): the measured tile
// and split choices on issue 5's layers, the one-block-per-SM rule, and the
// fallback to the mma.sync tiles where the layer or the shared memory does
// not take the 64-token tiles.

#include "kernels/gemm_prefill_plan.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

// The tile letter of the plan's entry for M: 6 = 64x128x128, 2 = 64x256x128
// (sixteen warps), W = 128x128x128, G = the same in grouped order, Q =
// 256x128x128 (3 stages, grouped), q = 256x128x64 (5 stages, grouped).
char TileAt(const Plan& plan, int64_t m, int64_t* splits) {
  for (const PlanEntry& entry : plan.entries) {
    if (entry.m_min > m || m > entry.m_max) continue;
    *splits = entry.launch.grid_z;
    const std::string& text = entry.config.text;
    if (text == "tile=64x128x128,warps=1x8,stages=4,mma=wgmma") return '6';
    if (text == "tile=64x256x128,warps=1x16,stages=3,mma=wgmma") return '2';
    if (text == "tile=128x128x128,warps=1x8,stages=4,mma=wgmma") return 'W';
    if (text == "tile=128x128x128,warps=1x8,stages=4,mma=wgmma,order=grouped") {
      return 'G';
    }
    if (text == "tile=256x128x128,warps=1x8,stages=3,mma=wgmma,order=grouped") {
      return 'Q';
    }
    if (text == "tile=256x128x64,warps=1x8,stages=5,mma=wgmma,order=grouped") {
      return 'q';
    }
    return '?';
  }
  return '-';
}

// Above M = 64 Hopper runs the wgmma skeleton's tiles: at 65-128 the
// 64-token ones (sweeps ba and bb,
// bench/results/tile-sweep-prefill-a0b7394.md), the 128-row tile two per SM,
// split where its grid is short of the 264 slots. Above 128 the 128-token tile,
// one per SM, wherever 0.9 times its busiest SM's work is at most the 64-token
// grid's (sweeps be-bh, bench/results/tile-sweep-prefill-bf-bh.md), in grouped
// block order from M = 513; the 64-token tiles elsewhere: the 128-row one, or
// the 256-row sixteen-warp one where the 128-row one holds one block per SM
// (8-bit weights, 4-bit ones with zero points) and, for 4-bit weights, from
// 1025. From M = 961, for clients of launch ABI 4, the 256-token tile
// wherever 0.9 times its weighed work is at most the others' (sweep bj).
TEST(GemmPrefillPlanTest, LargerMOnHopperRunsSixtyFourTo256TokenTiles) {
  constexpr int64_t kMs[] = {100, 200, 300, 384,  448,  512,
                             600, 700, 800, 1000, 1100, 4096};
  struct Expected {
    const char* spec;
    int64_t n, k;
    const char* tiles;               // at kMs
    int64_t splits_100, splits_200;  // unsplit from M = 257
  };
  constexpr const char* kW4 = "weight=uint4,group=128,scale=fp16";
  constexpr const char* kE4m3 = "weight=e4m3,group=128,scale=fp16";
  constexpr const char* kW4Zero = "weight=uint4,group=128,scale=fp16,zero=int";
  const Expected cases[] = {
      // Measured (sweeps bg, bh): at 384 two 128-token blocks on the busiest
      // SM against three 64-token ones, 1.5 of them (115.9 against 98.9 µs);
      // at 512 four against eight; 640 / 768 / 896 alternate likewise.
      {kW4, 8192, 8192, "6W66WW6G6QGQ", 2, 1},
      {kW4, 8192, 28672, "6W66WW6G6QGQ", 2, 1},
      // 224 n-blocks: from 257 to 320 six 128-token blocks on the busiest SM
      // against nine 64-token ones.
      {kW4, 28672, 8192, "666W6WG6GQGQ", 1, 1},
      {kW4, 4096, 4096, "6WWWWW66GQGQ", 4, 2},
      {kW4, 6144, 4096, "6W6666G66GQQ", 2, 1},
      {kW4, 4096, 14336, "6WWWWW66GQGQ", 4, 2},
      // Against the 256-row tile, one per SM like the 128-token one; 8-bit
      // weights and zero points take the 256-token tile in 64-column
      // stages.
      {kE4m3, 8192, 8192, "6WWWWWGGGqGq", 1, 1},
      {kE4m3, 28672, 8192, "6W2W2WGGGqGq", 1, 1},
      {kW4Zero, 8192, 8192, "6WWWWWGGGqGq", 1, 1},
      {kW4Zero, 6144, 4096, "6W2WWWG2GGqq", 1, 1},
  };
  for (const Expected& expected : cases) {
    SCOPED_TRACE(::testing::Message() << expected.spec << " N=" << expected.n
                                      << " K=" << expected.k);
    absl::StatusOr<Plan> plan =
        PlanKernels(H200GemmRequest(expected.spec, expected.n, expected.k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::string tiles;
    std::vector<int64_t> splits;
    for (int64_t m : kMs) {
      int64_t entry_splits = 0;
      tiles += TileAt(*plan, m, &entry_splits);
      splits.push_back(entry_splits);
    }
    EXPECT_EQ(tiles, expected.tiles);
    // On these layers a client of launch ABI 3 gets planner v32's plan: the
    // 128-token tile in grouped order where ABI 4 plans the 256-token one.
    absl::StatusOr<Plan> abi3 = PlanKernels(
        testing::GemmRequest(expected.spec, expected.n, expected.k, "sm_90a",
                             132, kLaunchAbiPrefillTiles));
    ASSERT_TRUE(abi3.ok()) << abi3.status();
    std::string abi3_tiles;
    for (int64_t m : kMs) {
      int64_t entry_splits = 0;
      abi3_tiles += TileAt(*abi3, m, &entry_splits);
    }
    std::string expected_abi3 = expected.tiles;
    std::replace(expected_abi3.begin(), expected_abi3.end(), 'Q', 'G');
    std::replace(expected_abi3.begin(), expected_abi3.end(), 'q', 'G');
    EXPECT_EQ(abi3_tiles, expected_abi3);
    EXPECT_EQ(splits[0], expected.splits_100);
    EXPECT_EQ(splits[1], expected.splits_200);
    for (size_t i = 2; i < splits.size(); ++i) {
      EXPECT_EQ(splits[i], 1) << kMs[i];
    }
    // Neighbouring entries differ (equal ones merge), and grouped order
    // starts at 513.
    for (size_t i = 1; i < plan->entries.size(); ++i) {
      const PlanEntry& entry = plan->entries[i];
      EXPECT_EQ(entry.m_min, plan->entries[i - 1].m_max + 1);
      // The first prefill entry may repeat the decode plan's last one.
      if (entry.m_min <= 65) continue;
      EXPECT_FALSE(entry.config == plan->entries[i - 1].config &&
                   entry.launch == plan->entries[i - 1].launch)
          << entry.m_min;
      if (absl::StrContains(entry.config.text, "order=grouped")) {
        EXPECT_GE(entry.m_min, 513) << entry.config.text;
      }
    }
  }
  // 8192 x 8192 W4 exactly: the 64- and 128-token tiles alternate by 128
  // tokens up to 960, then the grouped 128- and 256-token tiles by 256
  // tokens up to 2048, and the 256-token one above.
  absl::StatusOr<Plan> w4 = PlanKernels(H200GemmRequest(kW4, 8192, 8192));
  ASSERT_TRUE(w4.ok()) << w4.status();
  std::vector<int64_t> starts;
  for (const PlanEntry& entry : w4->entries) {
    if (entry.m_min > 64) starts.push_back(entry.m_min);
  }
  EXPECT_EQ(starts, (std::vector<int64_t>{65, 129, 257, 385, 513, 641, 769, 897,
                                          961, 1025, 1281, 1537, 1793}));
  EXPECT_EQ(w4->entries.back().m_max, kDefaultMaxM);
  EXPECT_EQ(w4->entries.back().config.text,
            "tile=256x128x128,warps=1x8,stages=3,mma=wgmma,order=grouped");
  // A layer of one 128-row n-block keeps the 64-token tile at every M above
  // 64 (its 128-token grid would leave more SMs idle), also above 2048.
  absl::StatusOr<Plan> narrow = PlanKernels(H200GemmRequest(kW4, 128, 4096));
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  for (const PlanEntry& entry : narrow->entries) {
    if (entry.m_min <= 64) continue;
    EXPECT_EQ(entry.config.text, "tile=64x128x128,warps=1x8,stages=4,mma=wgmma")
        << entry.m_min;
  }
  // A client before launch ABI 3 cannot read the 128-token tiles or
  // grouped order, and keeps planner v28's 64-token tiles.
  absl::StatusOr<Plan> abi2 = PlanKernels(testing::GemmRequest(
      kW4, 8192, 8192, "sm_90a", 132, kLaunchAbiKSplitTiles));
  ASSERT_TRUE(abi2.ok()) << abi2.status();
  std::string abi2_tiles;
  for (int64_t m : kMs) {
    int64_t entry_splits = 0;
    abi2_tiles += TileAt(*abi2, m, &entry_splits);
  }
  EXPECT_EQ(abi2_tiles, "666666666622");
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

// What each tile asks of the client, from its text.
TEST(GemmPrefillPlanTest, GemmTileLaunchAbiNamesWhatATileNeeds) {
  const struct {
    const char* text;
    uint32_t abi;
  } cases[] = {
      {"tile=128x128x64,warps=2x4,stages=4", kLaunchAbiOriginal},
      {"tile=64x128x128,warps=1x8,stages=4,mma=wgmma", kLaunchAbiOriginal},
      {"tile=16x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor",
       kLaunchAbiKMajorScales},
      {"tile=8x32x1024,warps=1x8,stages=4,mma=wgmma,ksplit=4",
       kLaunchAbiKSplitTiles},
      {"tile=128x128x128,warps=1x8,stages=4,mma=wgmma", kLaunchAbiPrefillTiles},
      {"tile=64x128x128,warps=1x8,stages=4,mma=wgmma,order=grouped",
       kLaunchAbiPrefillTiles},
      {"tile=256x128x128,warps=1x8,stages=3,mma=wgmma,order=grouped",
       kLaunchAbiTokenTiles256},
      {"tile=256x128x64,warps=1x8,stages=5,mma=wgmma", kLaunchAbiTokenTiles256},
  };
  for (const auto& c : cases) {
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(c.text);
    ASSERT_TRUE(tile.ok()) << c.text << ": " << tile.status();
    EXPECT_EQ(GemmTileLaunchAbi(*tile), c.abi) << c.text;
  }
}

// No client is planned a tile it cannot read: every entry, decode and
// prefill, on every launch ABI, and each ABI step changes some plan.
TEST(GemmPrefillPlanTest, EveryPlannedTileIsLaunchableByTheRequestsAbi) {
  int newest_tiles[kCurrentLaunchAbi + 1] = {};
  for (const char* spec :
       {"weight=uint4,group=128,scale=fp16",
        "weight=uint8,group=128,scale=fp16",
        "weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16"}) {
    for (const auto& [n, k] : {std::pair<int64_t, int64_t>{8192, 8192},
                               {4096, 4096},
                               {11776, 8192},
                               {28672, 8192},
                               {1024, 8192},
                               {192, 256}}) {
      for (uint32_t abi = 0; abi <= kCurrentLaunchAbi; ++abi) {
        absl::StatusOr<Plan> plan =
            PlanKernels(testing::GemmRequest(spec, n, k, "sm_90a", 132, abi));
        ASSERT_TRUE(plan.ok()) << plan.status();
        absl::StatusOr<Plan> ampere =
            PlanKernels(testing::GemmRequest(spec, n, k, "sm_80", 108, abi));
        ASSERT_TRUE(ampere.ok()) << ampere.status();
        plan->entries.insert(plan->entries.end(), ampere->entries.begin(),
                             ampere->entries.end());
        for (const PlanEntry& entry : plan->entries) {
          if (entry.config.skeleton != kGemmWgmmaSkeleton &&
              entry.config.skeleton != kGemmSkeleton) {
            continue;
          }
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
  ASSERT_GE(full.size(), 2u);
  EXPECT_EQ(full.front().m_min, 65);
  EXPECT_EQ(full.back().m_max, kDefaultMaxM);
  for (const PlanEntry& entry : full) {
    EXPECT_LE(entry.launch.dynamic_shared_memory,
              GemmSharedMemoryLimit(request.gpu));
  }
}

}  // namespace
}  // namespace hummingd
