// Hopper's decode plan (kernels/gemm_decode_plan.h): for the layers of
// issue 5 the M <= 64 ranges are wgmma kernels whose choices are
// deterministic, legal and fill the machine, followed by the prefill ranges
// (gemm_prefill_plan_test.cc); the split-K choice on hand-checked cases; the
// wgmma tile text and its validation; codegen refuses wgmma off Hopper.

#include "kernels/gemm_decode_plan.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/gemm_config.h"
#include "kernels/launch_abi.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

// An H200's 132 SMs.
KernelRequest Request(const char* spec_text, int64_t n, int64_t k,
                      const char* arch = "sm_90a") {
  return testing::GemmRequest(spec_text, n, k, arch, 132);
}

constexpr auto& kDecodeLayers = testing::kIssue5Layers;

// The table of record's specs and the group sizes the issue also reports.
const std::vector<const char*> kDecodeSpecs = [] {
  std::vector<const char*> specs(std::begin(testing::kIssue5TableSpecs),
                                 std::end(testing::kIssue5TableSpecs));
  specs.insert(specs.end(), {"weight=uint4,group=32,scale=fp16",
                             "weight=uint4,group=64,scale=fp16",
                             "weight=uint4,group=channel,scale=fp16"});
  return specs;
}();

TEST(GemmDecodePlanTest, HopperDecodeRangesAreWgmmaAndFillTheMachine) {
  for (const char* spec : kDecodeSpecs) {
    for (auto [n, k] : kDecodeLayers) {
      SCOPED_TRACE(::testing::Message() << spec << " N=" << n << " K=" << k);
      const KernelRequest request = Request(spec, n, k);
      absl::StatusOr<Plan> plan = PlanKernels(request);
      ASSERT_TRUE(plan.ok()) << plan.status();
      absl::StatusOr<Plan> again = PlanKernels(request);
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(*plan, *again);
      ASSERT_GE(plan->entries.size(), 4u);
      const int64_t expected_tokens[] = {8, 16, 32, 64};
      for (int i = 0; i < 4; ++i) {
        const PlanEntry& entry = plan->entries[i];
        EXPECT_EQ(entry.m_max, expected_tokens[i]);
        EXPECT_EQ(entry.config.skeleton, kGemmWgmmaSkeleton);
        absl::StatusOr<GemmTileConfig> tile =
            ParseGemmTileText(entry.config.text);
        ASSERT_TRUE(tile.ok()) << tile.status();
        EXPECT_EQ(tile->mma, GemmMma::kWgmma);
        EXPECT_EQ(tile->block_m, expected_tokens[i]);
        EXPECT_TRUE(entry.launch.programmatic_dependent_launch);
        EXPECT_TRUE(ValidateGemmTile(*tile, n, k).ok());
        // Every SM gets work, each split keeps >= 4 k-tiles, and the ring
        // runs at least two tiles ahead; 256-column k-tiles (twice the
        // bytes per stage) keep >= 2 per split and run one ahead.
        const int64_t blocks = entry.launch.grid_y * entry.launch.grid_z;
        // (And k-split warps' tiles of 512-1024 columns.)
        const bool wide_k = tile->block_k >= 256;
        EXPECT_GE(blocks, 0.8 * 132) << entry.config.text;
        EXPECT_GE(k / tile->block_k / entry.launch.grid_z, wide_k ? 2 : 4);
        EXPECT_GE(tile->stages, wide_k ? 3 : 4);
        EXPECT_LE(entry.launch.dynamic_shared_memory, 227 * 1024);
        // The tile's shared memory, padded so that no more blocks than
        // planned fit on an SM, whatever its register count.
        EXPECT_EQ(entry.launch.dynamic_shared_memory,
                  std::max(tile->SharedBytes(request.spec),
                           Sm90SharedBytesForAtMost(WgmmaBlocksPerSm(*tile))));
        EXPECT_LE(Sm90ResidentBlocks(tile->Threads(), /*registers=*/1,
                                     entry.launch.dynamic_shared_memory),
                  WgmmaBlocksPerSm(*tile))
            << entry.config.text;
        // Pre-scaled operands only where they won: 8-bit weights at 64
        // tokens.
        EXPECT_EQ(tile->prescaled_scales,
                  expected_tokens[i] == 64 && request.spec.weight.bits == 8)
            << entry.config.text;
        // k-major scales exactly on the 256-row tiles (every spec here has
        // one scale per row and no zero points).
        EXPECT_EQ(tile->k_major_scales, tile->block_n == 256)
            << entry.config.text;
      }
      // Above the decode ranges, the 64-, 128- and 256-token tiles
      // (gemm_prefill_plan.h).
      ASSERT_GE(plan->entries.size(), 6u);
      EXPECT_EQ(plan->entries[4].m_min, 65);
      EXPECT_EQ(plan->entries.back().m_max, kDefaultMaxM);
      for (size_t i = 4; i < plan->entries.size(); ++i) {
        const PlanEntry& entry = plan->entries[i];
        EXPECT_EQ(entry.m_min, plan->entries[i - 1].m_max + 1);
        // Merged steps of 64 tokens.
        EXPECT_EQ(entry.m_max % 64, 0);
        EXPECT_EQ(entry.config.skeleton, kGemmWgmmaSkeleton);
        EXPECT_TRUE(entry.launch.programmatic_dependent_launch);
        absl::StatusOr<GemmTileConfig> tile =
            ParseGemmTileText(entry.config.text);
        ASSERT_TRUE(tile.ok()) << tile.status();
        if (entry.m_min <= 128) {
          EXPECT_EQ(tile->block_m, 64);
        }
        if (entry.m_min <= 960) {
          EXPECT_LE(tile->block_m, 128);
        }
        EXPECT_TRUE(tile->block_m == 64 || tile->block_m == 128 ||
                    tile->block_m == 256);
        EXPECT_EQ(entry.launch.m_per_block_x, tile->block_m);
        EXPECT_TRUE(ValidateGemmTile(*tile, n, k).ok());
        EXPECT_LE(entry.launch.dynamic_shared_memory, 227 * 1024);
        EXPECT_GE(entry.launch.dynamic_shared_memory,
                  tile->SharedBytes(request.spec));
      }
    }
  }
}

TEST(GemmDecodePlanTest, OnlyHopperLayersWithNMultipleOf64GetWgmma) {
  for (const char* arch : {"sm_80", "sm_86", "sm_89"}) {
    absl::StatusOr<Plan> plan = PlanKernels(
        Request("weight=uint4,group=128,scale=fp16", 8192, 8192, arch));
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (const PlanEntry& entry : plan->entries) {
      EXPECT_EQ(entry.config.skeleton, kGemmSkeleton) << arch;
    }
  }
  absl::StatusOr<Plan> narrow =
      PlanKernels(Request("weight=uint4,group=16,scale=fp16", 48, 192));
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  for (const PlanEntry& entry : narrow->entries) {
    EXPECT_EQ(entry.config.skeleton, kGemmSkeleton);
  }
  // N = 192: one warpgroup of one 64-row block.
  absl::StatusOr<Plan> odd =
      PlanKernels(Request("weight=uint4,group=64,scale=fp16", 192, 256));
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_EQ(odd->entries[0].config.skeleton, kGemmWgmmaSkeleton);
  EXPECT_EQ(ParseGemmTileText(odd->entries[0].config.text)->warps_n, 4);
}

// The planner's choices on the layers its sweeps measured
// (bench/results/gemm-decode-ab-2fd1435-9783e8d.md, tile-sweep-a9fcdbf.md,
// tile-sweep-a2df06b.md, tile-sweep-e24ce42.md):
// 128-row tiles of 16 KB k-tiles (256 columns of 4-bit weights, 128 of
// 8-bit ones) in as many splits as one wave of two per SM holds, at 8
// tokens and, for 4-bit weights on splits of >= 4 k-tiles, at 16 and 32
// (planner v16-v18); bf16 only up to 8 k-tiles per split, else the 256-row
// k-major tiles; short rings; splits within one wave; 4-bit 16-token tiles
// three per SM on layers of many short splits; weights by cp.async.
TEST(GemmDecodePlanTest, PlannerPicksTheMeasuredWinners) {
  struct Expected {
    const char* spec;
    int64_t n, k;
    const char* tiles[4];
    int64_t splits[4];
  };
  const Expected expected[] = {
      // 8 tokens: k-split warps over 32-row blocks (256, unsplit; planner
      // v20).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       8192,
       8192,
       {"tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=32x128x256,warps=1x8,stages=3,mma=wgmma",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {1, 4, 4, 4}},
      // 256-column k-tiles in 8 splits of 7 k-tiles up to 32 tokens: at 8
      // tokens in 64-row blocks four per SM (512 blocks; planner v34), at 16
      // and 32 in 128-row blocks two per SM (256 blocks).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       4096,
       14336,
       {"tile=8x64x256,warps=1x4,stages=4,mma=wgmma,blocks=4",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=32x128x256,warps=1x8,stages=3,mma=wgmma",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {8, 8, 8, 8}},
      // 8 tokens: k-split warps over 32-row blocks (192, unsplit; planner
      // v19); 16 and 32 tokens: splits of 3.2 256-column k-tiles are too
      // short.
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       6144,
       4096,
       {"tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4",
        "tile=16x128x128,warps=1x8,stages=4,mma=wgmma,blocks=3",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {1, 8, 5, 5}},
      // 224 128-row blocks need no split up to 32 tokens (256-column
      // k-tiles).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       28672,
       8192,
       {"tile=8x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=32x128x256,warps=1x8,stages=3,mma=wgmma",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {1, 1, 1, 1}},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       8192,
       28672,
       {"tile=8x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=32x128x256,warps=1x8,stages=3,mma=wgmma",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {4, 4, 4, 4}},
      // bf16 on splits of 28-32 k-tiles keeps the 256-row k-major tiles at
      // 8 and 16 tokens, and BK 128 at 32.
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16",
       28672,
       8192,
       {"tile=8x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor",
        "tile=16x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {2, 2, 1, 1}},
      // 8 tokens: k-split warps over 16-row blocks (256, unsplit; v19); 16:
      // 256-column k-tiles, two per split (256 blocks, two per SM).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       4096,
       4096,
       {"tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8",
        "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {1, 1, 8, 8}},
      // 8-bit weights at 8 tokens: 128-column k-tiles (16 KB) in long
      // splits (planner v18).
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
       8192,
       28672,
       {"tile=8x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=16x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre"},
       {4, 4, 4, 4}},
      // Small layers: 8-bit weights at 8 tokens take k-split warps where K
      // is short (v19), else the 16-token tile's shape and splits (4096 x
      // 14336 below); at 16 tokens too over 16-row blocks (v20), three per
      // SM on 6144 x 4096 (v23).
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
       4096,
       4096,
       {"tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8",
        "tile=16x16x512,warps=1x8,stages=4,mma=wgmma,ksplit=8",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre"},
       {1, 1, 8, 8}},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
       6144,
       4096,
       {"tile=8x32x512,warps=1x8,stages=4,mma=wgmma,ksplit=4",
        "tile=16x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=3",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre"},
       {1, 1, 5, 5}},
      // 8-bit weights with fp16 activations at 8 tokens: 16-row k-split
      // blocks past K = 4096, two per SM on N = 4096 and four per SM on N =
      // 8192 (planner v21).
      {"weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16",
       4096,
       14336,
       {"tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8",
        "tile=16x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre"},
       {1, 8, 8, 8}},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
       8192,
       8192,
       {"tile=8x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=4",
        "tile=16x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre"},
       {1, 4, 4, 4}},
      // bf16 on splits of <= 8 k-tiles: 256-column k-tiles at 16 and 32
      // tokens as for fp16 (and k-split warps at 8).
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16",
       8192,
       8192,
       {"tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=32x128x256,warps=1x8,stages=3,mma=wgmma",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {1, 4, 4, 4}},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16",
       4096,
       14336,
       {"tile=8x64x256,warps=1x4,stages=4,mma=wgmma,blocks=4",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=32x128x256,warps=1x8,stages=3,mma=wgmma",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {8, 8, 8, 8}},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(::testing::Message()
                 << e.spec << " N=" << e.n << " K=" << e.k);
    absl::StatusOr<Plan> plan = PlanKernels(Request(e.spec, e.n, e.k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_GE(plan->entries.size(), 4u);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(plan->entries[i].config.text, e.tiles[i]);
      EXPECT_EQ(plan->entries[i].launch.grid_z, e.splits[i]);
    }
  }
}

// Planner v35 (sweep bs, bench/results/tile-sweep-bs-0deaee3.json): scale
// groups of 32 and 64 take group 128's tiles and splits at 8, 16 and 32
// tokens (fp16 groups of 32, M = 1 / 8: 8192 x 8192 11.31 / 11.97 µs
// against 12.94 / 13.32 for the 256-row k-major tile, 4096 x 14336 10.14 /
// 10.44 against 12.82 / 13.14, 6144 x 4096 5.70 / 6.11 against 8.15 /
// 8.33; M = 16 8192 x 8192 14.01 against 15.09), except that groups of 32,
// like bf16, keep the 256-row k-major tiles on splits of more than 8
// k-tiles (8192 x 28672 and 28672 x 8192 at 8 and 16 tokens, and BK 128
// at 32), and (planner v36) groups of 32 take the 64-row half of the
// long-split tile, four per SM, where group 128 runs the k-split tile past
// K = 4096 (8192 x 8192 at 8 tokens: fp16 10.99-11.33 µs at M = 1-8 against
// 11.31-11.97). The 64-token tiles were already the same. Groups of 16 were
// not measured and keep theirs.
TEST(GemmDecodePlanTest, GroupsOf32And64TakeTheGroup128Rules) {
  const auto plan_of = [](const std::string& spec, int64_t n, int64_t k) {
    absl::StatusOr<Plan> plan = PlanKernels(Request(spec.c_str(), n, k));
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? *plan : Plan{};
  };
  for (const char* activations :
       {"scale=fp16,act=fp16,out=fp16", "scale=bf16,act=bf16,out=bf16"}) {
    for (auto [n, k] : kDecodeLayers) {
      const Plan coarse =
          plan_of(absl::StrCat("weight=uint4,group=128,", activations), n, k);
      ASSERT_GE(coarse.entries.size(), 4u);
      for (const int group : {32, 64}) {
        SCOPED_TRACE(::testing::Message() << activations << " group=" << group
                                          << " N=" << n << " K=" << k);
        const Plan fine = plan_of(
            absl::StrCat("weight=uint4,group=", group, ",", activations), n, k);
        ASSERT_GE(fine.entries.size(), 4u);
        const bool fp16 =
            std::string(activations).find("act=fp16") != std::string::npos;
        // Splits of 28-32 k-tiles: bf16 keeps the k-major tiles for both.
        const bool long_splits = k >= 28672 || n >= 28672;
        const bool keeps_k_major = group == 32 && fp16 && long_splits;
        const bool half_tile = group == 32 && n == 8192 && k == 8192;
        for (int i = 0; i < 4; ++i) {
          const PlanEntry& f = fine.entries[i];
          const PlanEntry& c = coarse.entries[i];
          if (half_tile && i == 0) {
            EXPECT_EQ(c.config.text,
                      "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4");
            EXPECT_EQ(f.config.text,
                      "tile=8x64x256,warps=1x4,stages=4,mma=wgmma,blocks=4");
            EXPECT_EQ(f.launch.grid_z, 4);
          } else if (keeps_k_major && i < 2) {
            EXPECT_NE(f.config.text.find("x256x128,warps=1x8,stages=4,"
                                         "mma=wgmma,layout=kmajor"),
                      std::string::npos)
                << f.config.text;
            EXPECT_NE(f.config.text, c.config.text);
          } else if (keeps_k_major && i == 2) {
            EXPECT_EQ(f.config.text,
                      "tile=32x128x128,warps=1x8,stages=4,mma=wgmma");
          } else {
            EXPECT_EQ(f.config.text, c.config.text);
            EXPECT_EQ(f.launch.grid_z, c.launch.grid_z);
          }
        }
      }
    }
  }
  // Groups of 16 keep the 256-row k-major tile at 8 tokens where groups of
  // 32 take the 64-row half tile (4096 x 14336).
  const Plan g16 = plan_of("weight=uint4,group=16,scale=fp16", 4096, 14336);
  const Plan g32 = plan_of("weight=uint4,group=32,scale=fp16", 4096, 14336);
  ASSERT_FALSE(g16.entries.empty() || g32.entries.empty());
  EXPECT_EQ(g16.entries[0].config.text,
            "tile=8x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
  EXPECT_EQ(g32.entries[0].config.text,
            "tile=8x64x256,warps=1x4,stages=4,mma=wgmma,blocks=4");
  EXPECT_EQ(g32.entries[0].launch.grid_z, 8);
  // Beyond the six layers and the measured spec, groups of 32 and 64 plan
  // as groups of 128 (entry by entry up to 32 tokens): with integer zero
  // points on 8192 x 8192 (the half tile does not fit four per SM, so the
  // k-split tile stays), on N = 6208 (no 128-row tile), on the layers where
  // 256-column k-tiles run splits of two (2048 x 4096, 5120 x 4096) and
  // where the 16-token tile runs three per SM (8192 x 7808, whose 8-token
  // tile is the 128-row one four per SM, which fine groups stay off).
  // Where their larger scale windows do not fit a tile's budget (fp32
  // scales in groups of 32 on 8192 x 8192: neither the k-split tile nor the
  // three-per-SM one), they take the next rule's tile instead.
  struct Layer {
    const char* spec_tail;
    int64_t n, k;
    int first_entry;
  };
  const Layer layers[] = {
      {"scale=fp16,zero=int", 8192, 8192, 0}, {"scale=fp16", 6208, 8192, 0},
      {"scale=fp16", 2048, 4096, 0},          {"scale=fp16", 5120, 4096, 0},
      {"scale=fp16", 8192, 7808, 1},
  };
  for (const Layer& layer : layers) {
    const Plan coarse =
        plan_of(absl::StrCat("weight=uint4,group=128,", layer.spec_tail),
                layer.n, layer.k);
    for (const int group : {32, 64}) {
      SCOPED_TRACE(::testing::Message()
                   << layer.spec_tail << " group=" << group << " N=" << layer.n
                   << " K=" << layer.k);
      const Plan fine = plan_of(
          absl::StrCat("weight=uint4,group=", group, ",", layer.spec_tail),
          layer.n, layer.k);
      ASSERT_EQ(fine.entries.size(), coarse.entries.size());
      for (int i = layer.first_entry; i < 3; ++i) {
        EXPECT_EQ(fine.entries[i].config.text, coarse.entries[i].config.text);
        EXPECT_EQ(fine.entries[i].launch.grid_z,
                  coarse.entries[i].launch.grid_z);
      }
    }
  }
  // Of those, the k-split tile with zero points at 8 tokens, 256-column
  // short splits, and three per SM at 16 tokens; with fp32 scales the
  // 128-row long-split tile; 8-bit weights in groups of 32, never measured
  // with these tiles, keep the 256-row k-major tile.
  struct Tile {
    const char* spec;
    int64_t n, k;
    int entry;
    const char* text_part;
  };
  const Tile tiles[] = {
      {"weight=uint4,group=32,scale=fp16,zero=int", 8192, 8192, 0, ",ksplit=4"},
      {"weight=uint4,group=32,scale=fp16", 2048, 4096, 0, "x128x256,"},
      {"weight=uint4,group=32,scale=fp16", 8192, 7808, 1, ",blocks=3"},
      {"weight=uint4,group=32,scale=fp32", 8192, 8192, 0,
       "tile=8x128x256,warps=1x8,stages=4,mma=wgmma"},
      {"weight=uint8,group=32,scale=fp16", 8192, 8192, 0,
       "tile=8x256x64,warps=1x8,stages=5,mma=wgmma,layout=kmajor"},
  };
  for (const Tile& t : tiles) {
    SCOPED_TRACE(::testing::Message()
                 << t.spec << " N=" << t.n << " K=" << t.k);
    const Plan plan = plan_of(t.spec, t.n, t.k);
    ASSERT_GT(plan.entries.size(), static_cast<size_t>(t.entry));
    EXPECT_NE(plan.entries[t.entry].config.text.find(t.text_part),
              std::string::npos)
        << plan.entries[t.entry].config.text;
  }
}

// The residency padding never asks for more shared memory than the GPU
// lets a block opt into: a two-per-SM tile is padded to 76801 bytes, or
// to a lower opt-in limit, and never below its own footprint.
TEST(GemmDecodePlanTest, ResidencyPaddingStaysWithinTheOptInLimit) {
  absl::StatusOr<QuantSpec> spec =
      ParseSpecText("weight=uint4,group=128,scale=fp16,act=fp16,out=fp16");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const QuantSpec canonical = Canonicalize(*spec);
  LayerShape shape;
  shape.n = 4096;
  shape.k = 4096;
  absl::StatusOr<GemmTileConfig> tile =
      ParseGemmTileText("tile=32x128x128,warps=1x8,stages=3,mma=wgmma");
  ASSERT_TRUE(tile.ok()) << tile.status();
  ASSERT_EQ(WgmmaBlocksPerSm(*tile), 2);
  const int own = tile->SharedBytes(canonical);
  ASSERT_LT(own, 60000);
  EXPECT_EQ(MakeGemmPlanEntry(1, 32, *tile, canonical, shape, 1, 232448)
                .launch.dynamic_shared_memory,
            Sm90SharedBytesForAtMost(2));
  EXPECT_EQ(MakeGemmPlanEntry(1, 32, *tile, canonical, shape, 1, 60000)
                .launch.dynamic_shared_memory,
            60000);
  EXPECT_EQ(MakeGemmPlanEntry(1, 32, *tile, canonical, shape, 1, own - 1)
                .launch.dynamic_shared_memory,
            own);
}

// A 256-row candidate that does not fit the shared memory leaves the
// 128-row tile; it never fails the plan.
TEST(GemmDecodePlanTest, AWideTileThatDoesNotFitLeavesTheNarrowOne) {
  absl::StatusOr<QuantSpec> spec = ParseSpecText(
      "weight=uint4,group=16,scale=fp32,zero=float,act=fp16,out=fp16");
  ASSERT_TRUE(spec.ok()) << spec.status();
  LayerShape shape;
  shape.n = 256;
  shape.k = 4096;
  const int limit = 99 * 1024;
  absl::StatusOr<std::vector<PlanEntry>> entries = PlanWgmmaDecode(
      Canonicalize(*spec), shape, 132, limit, kCurrentLaunchAbi);
  ASSERT_TRUE(entries.ok()) << entries.status();
  for (const PlanEntry& entry : *entries) {
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(entry.config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_LE(entry.launch.dynamic_shared_memory, limit) << entry.config.text;
    if (tile->block_m == 16) {
      EXPECT_EQ(tile->block_n, 128) << entry.config.text;
    }
  }
}

// The sm_90 residency arithmetic on the kernels that showed it (decode-notes
// v40): the 32-token tile at 84 registers fits two blocks, at 80 three.
TEST(GemmDecodePlanTest, Sm90ResidencyCountsRegistersSharedMemoryAndThreads) {
  EXPECT_EQ(Sm90ResidentBlocks(256, 84, 74784), 2);  // 88 allocated
  EXPECT_EQ(Sm90ResidentBlocks(256, 80, 74784), 3);
  EXPECT_EQ(Sm90ResidentBlocks(256, 1, 50208), 4);  // by shared memory
  EXPECT_EQ(Sm90ResidentBlocks(1024, 1, 0), 2);     // by threads
  EXPECT_EQ(Sm90ResidentBlocks(32, 1, 0), 32);      // by the block limit
  EXPECT_EQ(Sm90ResidentBlocks(128, 255, 0), 2);    // 256 allocated
  for (int blocks = 1; blocks <= 4; ++blocks) {
    SCOPED_TRACE(blocks);
    const int bytes = Sm90SharedBytesForAtMost(blocks);
    EXPECT_EQ(Sm90ResidentBlocks(256, 1, bytes), blocks);
    EXPECT_EQ(Sm90ResidentBlocks(256, 1, bytes - 1), blocks + 1);
  }
}

TEST(GemmDecodePlanTest, SplitKFillsWavesAndWeighsReductionTraffic) {
  // 64 blocks on 264 slots: 4 splits fill 97% of one wave.
  EXPECT_EQ(ChooseSplitK(64, 64, 264, 4, 16, 0.0, 1.0), 4);
  // Enough blocks already: no split.
  EXPECT_EQ(ChooseSplitK(264, 64, 264, 4, 16, 0.0, 1.0), 1);
  // 112 blocks: 2 splits fill 85% of one wave; 7 would fill 99% of three.
  EXPECT_EQ(ChooseSplitK(112, 64, 264, 4, 16, 0.0, 1.0), 2);
  // Never fewer than 4 k-tiles per split.
  EXPECT_EQ(ChooseSplitK(8, 16, 264, 4, 16, 0.0, 1.0), 4);
  // Reduction traffic as large as the weights per split: splitting does
  // not pay.
  EXPECT_EQ(ChooseSplitK(64, 64, 132, 4, 16, 3.0, 1.0), 1);
  // Deterministic.
  EXPECT_EQ(ChooseSplitK(112, 128, 132, 4, 16, 1e6, 32e6),
            ChooseSplitK(112, 128, 132, 4, 16, 1e6, 32e6));
}

// The 8-token tiles planned four per SM fit four (shared memory, and the
// stub caps their registers at 64); the layers where they lost, or that
// take 256-column k-tiles since v16, keep or take those.
TEST(GemmDecodePlanTest, FourBlocksPerSmTilesFitFourAndTheStubSaysSo) {
  const char* const kW4 = "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16";
  // K not a multiple of 256 (where 256-column k-tiles cannot go; on 8192 x
  // 8192 and 4096 x 14336 they took over at planner v16).
  // 6144 x 4224 is the GPU suite's case for it.
  const std::pair<int64_t, int64_t> four_per_sm[] = {
      {8192, 7808}, {4096, 14208}, {6144, 4224}};
  for (auto [n, k] : four_per_sm) {
    SCOPED_TRACE(::testing::Message() << "N=" << n << " K=" << k);
    const KernelRequest request = Request(kW4, n, k);
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const PlanEntry& entry = plan->entries[0];
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(entry.config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_EQ(WgmmaBlocksPerSm(*tile), 4);
    // 228 KB per SM, 1 KB of it reserved per block.
    EXPECT_LE(4 * (entry.launch.dynamic_shared_memory + 1024), 228 * 1024);
    // More than two blocks per SM's worth, each split short.
    EXPECT_GT(entry.launch.grid_y * entry.launch.grid_z, 2 * 132);
    EXPECT_LE(k / tile->block_k, 8 * entry.launch.grid_z);
    absl::StatusOr<KernelSource> stub = GenerateStub(request, entry.config);
    ASSERT_TRUE(stub.ok()) << stub.status();
    EXPECT_NE(stub->source.find("__launch_bounds__(256, 4)"),
              std::string::npos);
  }
  // A bench override's blocks=N reaches the stub's launch bounds (the
  // 32-token tile's rule says two).
  {
    const KernelRequest request = Request(kW4, 8192, 8192);
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    KernelConfig config = plan->entries[2].config;  // 32 tokens
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_EQ(WgmmaBlocksPerSm(*tile), 2);
    tile->blocks_per_sm = 1;
    config.text = FormatGemmTileText(*tile);
    EXPECT_NE(config.text.find(",blocks=1"), std::string::npos);
    absl::StatusOr<KernelSource> stub = GenerateStub(request, config);
    ASSERT_TRUE(stub.ok()) << stub.status();
    EXPECT_NE(stub->source.find("__launch_bounds__(256, 1)"),
              std::string::npos);
  }
  // Splits of under 8 256-column k-tiles (4096 x 14336: 7) take the
  // 64-row half of the 128-row tile, four per SM, in the same splits
  // (planner v34), fp16 and bf16 alike; its stub bounds 128 threads at four.
  for (const char* spec :
       {kW4, "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16"}) {
    SCOPED_TRACE(spec);
    const KernelRequest request = Request(spec, 4096, 14336);
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const PlanEntry& entry = plan->entries[0];
    EXPECT_EQ(entry.config.text,
              "tile=8x64x256,warps=1x4,stages=4,mma=wgmma,blocks=4");
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(entry.config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_EQ(WgmmaBlocksPerSm(*tile), 4);
    EXPECT_LE(4 * (entry.launch.dynamic_shared_memory + 1024), 228 * 1024);
    EXPECT_EQ(entry.launch.grid_y * entry.launch.grid_z, 64 * 8);
    EXPECT_LE(entry.launch.grid_y * entry.launch.grid_z, 4 * 132);
    absl::StatusOr<KernelSource> stub = GenerateStub(request, entry.config);
    ASSERT_TRUE(stub.ok()) << stub.status();
    EXPECT_NE(stub->source.find("__launch_bounds__(128, 4)"),
              std::string::npos);
  }
  // 6144 x 4096 moved to 256-column k-tiles three per SM (planner v13).
  const std::pair<int64_t, int64_t> kept[] = {
      {4096, 4096}, {6144, 4096}, {28672, 8192}, {8192, 28672}, {8192, 8192}};
  for (auto [n, k] : kept) {
    SCOPED_TRACE(::testing::Message() << "N=" << n << " K=" << k);
    absl::StatusOr<Plan> plan = PlanKernels(Request(kW4, n, k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    absl::StatusOr<GemmTileConfig> tile =
        ParseGemmTileText(plan->entries[0].config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_NE(WgmmaBlocksPerSm(*tile), 4) << plan->entries[0].config.text;
  }
  // Scale groups finer than 128 columns never take the 128-row tile four
  // per SM at 8 tokens (slower on 8192 x 8192: gemm-decode-f3e0884.md);
  // there groups of 64 take the group-128 k-split tile (planner v35),
  // groups of 32 the 64-row half tile four per SM in 4 splits (v36), and
  // groups of 16 keep the 256-row k-major tile.
  const std::pair<const char*, std::pair<const char*, int64_t>> fine[] = {
      {"weight=uint4,group=16,scale=fp16",
       {"tile=8x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor", 8}},
      {"weight=uint4,group=32,scale=fp16",
       {"tile=8x64x256,warps=1x4,stages=4,mma=wgmma,blocks=4", 4}},
      {"weight=uint4,group=64,scale=fp16",
       {"tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4", 1}},
  };
  for (const auto& [spec, expected] : fine) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Plan> plan = PlanKernels(Request(spec, 8192, 8192));
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->entries[0].config.text, expected.first);
    EXPECT_EQ(plan->entries[0].launch.grid_z, expected.second);
  }
  // 2-D block scales: by their K side (128 columns: the k-split warps of
  // coarse scales on 8192 x 8192 since v20; 32: neither). 6-bit weights keep
  // deferred
  // scales at 64 tokens (pre-scaling was measured with 8-bit weights only).
  for (const char* spec : {"weight=uint4,group=32x128,scale=fp16",
                           "weight=uint4,group=128x128,scale=fp16"}) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Plan> plan = PlanKernels(Request(spec, 8192, 8192));
    ASSERT_TRUE(plan.ok()) << plan.status();
    absl::StatusOr<GemmTileConfig> tile =
        ParseGemmTileText(plan->entries[0].config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_NE(WgmmaBlocksPerSm(*tile), 4);
    const bool coarse =
        std::string(spec).find("group=128x128") != std::string::npos;
    if (coarse) {
      EXPECT_EQ(plan->entries[0].config.text,
                "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4");
    } else {
      EXPECT_LT(tile->block_k, 256) << plan->entries[0].config.text;
      EXPECT_EQ(tile->warp_split_k, 1) << plan->entries[0].config.text;
    }
  }
  absl::StatusOr<Plan> six_bit =
      PlanKernels(Request("weight=uint6,group=128,scale=fp16", 8192, 8192));
  ASSERT_TRUE(six_bit.ok()) << six_bit.status();
  EXPECT_EQ(six_bit->entries[3].config.text.find("scales=pre"),
            std::string::npos)
      << six_bit->entries[3].config.text;
  absl::StatusOr<Plan> channel =
      PlanKernels(Request("weight=uint4,group=channel,scale=fp16", 8192, 8192));
  ASSERT_TRUE(channel.ok()) << channel.status();
  EXPECT_EQ(channel->entries[0].config.text,
            "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4");
  // 8-bit weights at 8 tokens: 128-column k-tiles in long splits (planner
  // v18), with the launch bounds of four per SM (64 registers) that their
  // small-layer tile always had, though their shared memory lets two reside
  // (10240 x 8192: 8192 x 8192 takes k-split warps four per SM since v21).
  const KernelRequest w8_request = Request(
      "weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 10240, 8192);
  absl::StatusOr<Plan> w8 = PlanKernels(w8_request);
  ASSERT_TRUE(w8.ok()) << w8.status();
  const PlanEntry& w8_entry = w8->entries[0];
  EXPECT_EQ(w8_entry.config.text,
            "tile=8x128x128,warps=1x8,stages=4,mma=wgmma");
  EXPECT_EQ(Sm90ResidentBlocks(256, 64, w8_entry.launch.dynamic_shared_memory),
            2);
  absl::StatusOr<KernelSource> w8_stub =
      GenerateStub(w8_request, w8_entry.config);
  ASSERT_TRUE(w8_stub.ok()) << w8_stub.status();
  EXPECT_NE(w8_stub->source.find("__launch_bounds__(256, 4)"),
            std::string::npos);
}

// The 16-token tiles planned three per SM (planner v12) fit three (shared
// memory; blocks=3 caps the stub's registers), split to pass two blocks
// per SM with <= 12 k-tiles per split; the layers where they did not win
// keep theirs, and those whose K takes 256-column k-tiles in long splits
// take those (planner v18: 8192 x 8192, 4096 x 14336; here K = 7808 and
// 14208, not multiples of 256, keep three per SM).
TEST(GemmDecodePlanTest, ThreeBlocksPerSmTilesFitThreeAndTheStubSaysSo) {
  struct Layer {
    int64_t n, k, splits;
  };
  const Layer three_per_sm[] = {
      {8192, 7808, 6}, {4096, 14208, 12}, {6144, 4096, 8}};
  for (const char* spec :
       {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
        "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16"}) {
    for (const Layer& layer : three_per_sm) {
      SCOPED_TRACE(::testing::Message()
                   << spec << " N=" << layer.n << " K=" << layer.k);
      const KernelRequest request = Request(spec, layer.n, layer.k);
      absl::StatusOr<Plan> plan = PlanKernels(request);
      ASSERT_TRUE(plan.ok()) << plan.status();
      const PlanEntry& entry = plan->entries[1];
      EXPECT_EQ(entry.config.text,
                "tile=16x128x128,warps=1x8,stages=4,mma=wgmma,blocks=3");
      EXPECT_EQ(entry.launch.grid_z, layer.splits);
      absl::StatusOr<GemmTileConfig> tile =
          ParseGemmTileText(entry.config.text);
      ASSERT_TRUE(tile.ok()) << tile.status();
      EXPECT_EQ(WgmmaBlocksPerSm(*tile), 3);
      // 228 KB per SM, 1 KB of it reserved per block.
      EXPECT_LE(3 * (entry.launch.dynamic_shared_memory + 1024), 228 * 1024);
      EXPECT_GT(entry.launch.grid_y * entry.launch.grid_z, 2 * 132);
      EXPECT_LE(layer.k / tile->block_k, 12 * entry.launch.grid_z);
      absl::StatusOr<KernelSource> stub = GenerateStub(request, entry.config);
      ASSERT_TRUE(stub.ok()) << stub.status();
      EXPECT_NE(stub->source.find("__launch_bounds__(256, 3)"),
                std::string::npos);
    }
  }
  // 4096 x 4096: 8 splits are 256 blocks (no gain measured); 8192 x 28672:
  // 6 splits of 37 k-tiles (slower); 28672 x 8192: 224 blocks; groups of 16
  // and 8-bit weights were not measured three per SM; 8192 x 8192 and 4096 x
  // 14336 take 256-column k-tiles (v18), groups of 32 and 64 too (v35).
  const std::pair<const char*, std::pair<int64_t, int64_t>> kept[] = {
      {"weight=uint4,group=128,scale=fp16", {4096, 4096}},
      {"weight=uint4,group=128,scale=fp16", {8192, 28672}},
      {"weight=uint4,group=128,scale=fp16", {28672, 8192}},
      {"weight=uint4,group=128,scale=fp16", {8192, 8192}},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", {4096, 14336}},
      {"weight=uint4,group=16,scale=fp16", {8192, 8192}},
      {"weight=uint4,group=32,scale=fp16", {8192, 8192}},
      {"weight=uint4,group=64,scale=fp16", {8192, 8192}},
      {"weight=uint8,group=128,scale=fp16", {10240, 8192}}};
  for (const auto& [spec, layer] : kept) {
    SCOPED_TRACE(::testing::Message()
                 << spec << " N=" << layer.first << " K=" << layer.second);
    absl::StatusOr<Plan> plan =
        PlanKernels(Request(spec, layer.first, layer.second));
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (const PlanEntry& entry : plan->entries) {
      absl::StatusOr<GemmTileConfig> tile =
          ParseGemmTileText(entry.config.text);
      ASSERT_TRUE(tile.ok()) << tile.status();
      EXPECT_NE(WgmmaBlocksPerSm(*tile), 3) << entry.config.text;
      // Only a k-split tile (the v24 16-token block, one per SM) and the
      // 64-row half tile four per SM (planner v34) spell out their
      // residency on these layers.
      const bool half_tile_four_per_sm =
          tile->warps_n == 4 && tile->blocks_per_sm == 4;
      EXPECT_TRUE(tile->blocks_per_sm == 0 || tile->warp_split_k > 1 ||
                  half_tile_four_per_sm)
          << entry.config.text;
    }
  }
}

// 256-column k-tiles (planner v13) on the small layers at 8 and 16 tokens,
// two k-tiles per split, only where the grid fits one wave of block slots;
// the three-per-SM one says so in its text and its stub, and fits three.
TEST(GemmDecodePlanTest, K256TilesOnSmallLayersFitOneWave) {
  struct Case {
    const char* spec;
    int64_t n, k;
    int range;  // plan entry: 0 (8 tokens) or 1 (16 tokens)
    const char* tile;
    int blocks_per_sm;
  };
  // At 8 tokens on layers that k-split warps do not fill (planner v19:
  // 2048 x 4096, 128 16-row blocks; 5120 x 4096, 160 32-row blocks).
  const Case cases[] = {
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 2048, 4096, 0,
       "tile=8x128x256,warps=1x8,stages=4,mma=wgmma", 2},
      // 16 tokens where k-split warps do not take them (3-bit weights:
      // planner v24's 16-token blocks are for 4-bit ones).
      {"weight=uint3,group=128,scale=fp16", 4096, 4096, 1,
       "tile=16x128x256,warps=1x8,stages=3,mma=wgmma", 2},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 2048, 4096, 0,
       "tile=8x128x256,warps=1x8,stages=4,mma=wgmma", 2},
      {"weight=uint4,group=channel,scale=fp16", 2048, 4096, 1,
       "tile=16x128x256,warps=1x8,stages=3,mma=wgmma", 2},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 5120, 4096, 0,
       "tile=8x128x256,warps=1x8,stages=3,mma=wgmma,blocks=3", 3},
      {"weight=uint4,group=channel,scale=fp16", 5120, 4096, 0,
       "tile=8x128x256,warps=1x8,stages=3,mma=wgmma,blocks=3", 3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.spec << " N=" << c.n << " K=" << c.k
                                      << " range " << c.range);
    const KernelRequest request = Request(c.spec, c.n, c.k);
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const PlanEntry& entry = plan->entries[c.range];
    EXPECT_EQ(entry.config.text, c.tile);
    EXPECT_EQ(c.k / 256 / entry.launch.grid_z, 2);
    EXPECT_LE(entry.launch.grid_y * entry.launch.grid_z,
              int64_t{c.blocks_per_sm} * 132);
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(entry.config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_EQ(WgmmaBlocksPerSm(*tile), c.blocks_per_sm);
    // 228 KB per SM, 1 KB of it reserved per block.
    EXPECT_LE(c.blocks_per_sm * (entry.launch.dynamic_shared_memory + 1024),
              228 * 1024);
    absl::StatusOr<KernelSource> stub = GenerateStub(request, entry.config);
    ASSERT_TRUE(stub.ok()) << stub.status();
    EXPECT_NE(stub->source.find(absl::StrCat("__launch_bounds__(256, ",
                                             c.blocks_per_sm, ")")),
              std::string::npos);
  }
  // Not in splits of two k-tiles where that grid needs a second wave
  // (8192 x 8192, 4096 x 14336, 28672 x 8192 take longer splits at 8 tokens
  // instead: K256LongSplitsAt8TokensFillOneWave; 16 tokens on 6144 x 4096:
  // three per SM lost there), nor in splits that fill less than 3/4 of one
  // wave (1024 x 16384: 8 row blocks, 16 splits, 128 blocks; unmeasured),
  // nor for groups under 32 columns, 8-bit weights or a K that is not a
  // multiple of 256 (4096 x 4096 and 6144 x 4096 take k-split warps at 8
  // tokens, and 6144 x 4096 three per SM at 16).
  struct Kept {
    const char* spec;
    int64_t n, k;
  };
  const Kept kept[] = {
      {"weight=uint4,group=16,scale=fp16", 4096, 4096},
      {"weight=uint4,group=16,scale=fp16", 6144, 4096},
      {"weight=uint8,group=128,scale=fp16", 4096, 4096},
      {"weight=e4m3,group=128,scale=fp16", 6144, 4096},
      {"weight=uint4,group=128,scale=fp16", 4096, 4224},
      {"weight=uint4,group=128,scale=fp16", 1024, 16384},
  };
  for (const Kept& c : kept) {
    SCOPED_TRACE(::testing::Message()
                 << c.spec << " N=" << c.n << " K=" << c.k);
    absl::StatusOr<Plan> plan = PlanKernels(Request(c.spec, c.n, c.k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(plan->entries[i].config.text.find("x256,"), std::string::npos)
          << plan->entries[i].config.text;
    }
  }
  absl::StatusOr<Plan> w4_6144 = PlanKernels(Request(
      "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 6144, 4096));
  ASSERT_TRUE(w4_6144.ok()) << w4_6144.status();
  EXPECT_EQ(w4_6144->entries[1].config.text,
            "tile=16x128x128,warps=1x8,stages=4,mma=wgmma,blocks=3");
}

// Planner v16: at 8 tokens, 256-column k-tiles four stages deep, two per
// SM, in as many splits as one wave holds (the most <= 16 with n_blocks x
// splits <= 2 x SMs), where that fills >= 3/4 of the wave
// (bench/results/tile-sweep-83b167f.md). Planner v18: the same at 16 tokens
// and, three stages deep, at 32 where each split keeps >= 4 k-tiles, and
// for 8-bit weights at 8 tokens in 128-column k-tiles
// (bench/results/tile-sweep-16fb0a2.md).
TEST(GemmDecodePlanTest, LongSplitsOf16KbTilesFillOneWave) {
  struct Case {
    const char* spec;
    int64_t n, k;
    int64_t splits;
    // At 8 tokens: splits of under 8 k-tiles run the 64-row half of the
    // tile four per SM (planner v34), twice the blocks in twice the slots.
    bool half_tile;
  };
  const Case cases[] = {
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 8192, 8192, 4,
       false},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4096, 14336, 8,
       true},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 8192, 28672, 4,
       false},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 28672, 8192, 1,
       false},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 4096, 14336, 8,
       true},
      {"weight=uint4,group=channel,scale=fp16", 8192, 8192, 4, false},
      {"weight=uint3,group=128,scale=fp16", 8192, 8192, 4, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.spec << " N=" << c.n << " K=" << c.k);
    // 8192 x 8192 takes k-split warps at 8 tokens since v20; a client
    // before them (ABI 1) still gets the long splits.
    const KernelRequest request = testing::GemmRequest(
        c.spec, c.n, c.k, "sm_90a", 132, kLaunchAbiKMajorScales);
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const PlanEntry& entry = plan->entries[0];
    const int blocks_per_sm = c.half_tile ? 4 : 2;
    EXPECT_EQ(entry.config.text,
              c.half_tile
                  ? "tile=8x64x256,warps=1x4,stages=4,mma=wgmma,blocks=4"
                  : "tile=8x128x256,warps=1x8,stages=4,mma=wgmma");
    EXPECT_EQ(entry.launch.grid_z, c.splits);
    EXPECT_EQ(c.half_tile, c.k / 256 < 8 * c.splits);
    const int64_t blocks = entry.launch.grid_y * entry.launch.grid_z;
    EXPECT_LE(blocks, blocks_per_sm * 132);
    EXPECT_GE(4 * blocks, 3 * blocks_per_sm * 132);
    // Not splits of two k-tiles (the small-layer rule's).
    EXPECT_GT(c.k / 256, 2 * entry.launch.grid_z + 1);
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(entry.config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_EQ(WgmmaBlocksPerSm(*tile), blocks_per_sm);
    // 16 tokens: the same tile and splits (planner v18; >= 4 k-tiles per
    // split).
    EXPECT_EQ(plan->entries[1].config.text,
              "tile=16x128x256,warps=1x8,stages=4,mma=wgmma");
    EXPECT_EQ(plan->entries[1].launch.grid_z, c.splits);
  }
  // bf16 only up to 8 k-tiles per split (planner v17): the long-split
  // layers keep the 256-row k-major tile they ran faster on.
  for (auto [n, k, splits] :
       {std::tuple<int64_t, int64_t, int64_t>{8192, 28672, 8},
        std::tuple<int64_t, int64_t, int64_t>{28672, 8192, 2}}) {
    SCOPED_TRACE(::testing::Message() << "bf16 N=" << n << " K=" << k);
    absl::StatusOr<Plan> plan = PlanKernels(
        Request("weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", n, k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->entries[0].config.text,
              "tile=8x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
    EXPECT_EQ(plan->entries[0].launch.grid_z, splits);
  }
  // The fill bound: 100 row blocks in 2 splits fill 76% of the wave, 95
  // in 2 fill 72% and keep their tile; bf16 at 9 k-tiles per split (8192 x
  // 9216) keeps its 256-row tile; a layer of one k-tile (1408 x 256 on 114
  // SMs: 11 row blocks) never splits past its k-tiles to fill the wave.
  auto first_tile = [](const char* spec, int64_t n, int64_t k, int sms) {
    absl::StatusOr<Plan> plan = PlanKernels(
        testing::GemmRequest(spec, n, k, "sm_90a", sms, kCurrentLaunchAbi));
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? plan->entries[0] : PlanEntry();
  };
  const char* const kW4 = "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16";
  const PlanEntry filled = first_tile(kW4, 12800, 8192, 132);
  EXPECT_EQ(filled.config.text, "tile=8x128x256,warps=1x8,stages=4,mma=wgmma");
  EXPECT_EQ(filled.launch.grid_z, 2);
  EXPECT_EQ(first_tile(kW4, 12160, 8192, 132).config.text.find("x256,"),
            std::string::npos);
  const PlanEntry bf16_9 = first_tile(
      "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 8192, 9216, 132);
  EXPECT_EQ(bf16_9.config.text,
            "tile=8x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
  const PlanEntry one_tile = first_tile(kW4, 1408, 256, 114);
  EXPECT_EQ(one_tile.config.text.find("x256,"), std::string::npos)
      << one_tile.config.text;
  EXPECT_LE(one_tile.launch.grid_z * 64, 256);
  // 16 and 32 tokens: a split of exactly 4 k-tiles takes the rule (8192 x
  // 4096: 4 splits of 16), one of 3.75 does not (8192 x 3840).
  const PlanEntry four_tiles =
      PlanKernels(Request(kW4, 8192, 4096))->entries[1];
  EXPECT_EQ(four_tiles.config.text,
            "tile=16x128x256,warps=1x8,stages=4,mma=wgmma");
  EXPECT_EQ(four_tiles.launch.grid_z, 4);
  const Plan short_plan = *PlanKernels(Request(kW4, 8192, 3840));
  for (int i : {1, 2}) {
    EXPECT_EQ(short_plan.entries[i].config.text.find("x256,"),
              std::string::npos)
        << short_plan.entries[i].config.text;
  }
  // 8-bit weights: 128-column k-tiles at 8 tokens only (e4m3 too), and not
  // for widths no sweep measured (6 bits).
  for (const char* spec : {"weight=uint8,group=128,scale=fp16",
                           "weight=e4m3,group=128,scale=fp16"}) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Plan> w8 = PlanKernels(Request(spec, 28672, 8192));
    ASSERT_TRUE(w8.ok()) << w8.status();
    EXPECT_EQ(w8->entries[0].config.text,
              "tile=8x128x128,warps=1x8,stages=4,mma=wgmma");
    EXPECT_EQ(w8->entries[0].launch.grid_z, 1);
    EXPECT_EQ(w8->entries[1].config.text,
              "tile=16x128x128,warps=1x8,stages=4,mma=wgmma");
  }
  absl::StatusOr<Plan> w6 =
      PlanKernels(Request("weight=uint6,group=128,scale=fp16", 8192, 8192));
  ASSERT_TRUE(w6.ok()) << w6.status();
  EXPECT_NE(w6->entries[0].config.text,
            "tile=8x128x128,warps=1x8,stages=4,mma=wgmma");
  EXPECT_EQ(w6->entries[0].config.text.find("x256,"), std::string::npos)
      << w6->entries[0].config.text;
}

// Layers with more 128-row n-blocks than block slots (planner v26, sweeps at
// and au) run unsplit at every decode range. The 16 KB k-tile tiles of the
// long-split rule give way at 8 and 16 tokens to the default 256-row k-major
// tiles where those apply (N a multiple of 256, one scale per row, no zero
// points), and stay elsewhere: at 32 tokens with 4-bit weights and fp16
// activations, at 8 tokens with 8-bit weights, and at 8 and 16 tokens on
// layers without the k-major tiles.
TEST(GemmDecodePlanTest, LayersWiderThanAWaveRunUnsplit) {
  EXPECT_EQ(ChooseSplitK(448, 64, 264, 4, 16, 0.0, 1.0), 1);
  EXPECT_EQ(ChooseSplitK(265, 64, 264, 4, 16, 0.0, 1.0), 1);
  constexpr char kKMajor8[] =
      "tile=8x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor";
  constexpr char kKMajor16[] =
      "tile=16x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor";
  constexpr char kWideK32[] = "tile=32x128x256,warps=1x8,stages=3,mma=wgmma";
  constexpr char kPlain32[] = "tile=32x128x128,warps=1x8,stages=4,mma=wgmma";
  constexpr char kPlain64[] = "tile=64x128x128,warps=1x8,stages=4,mma=wgmma";
  struct Case {
    const char* spec;
    int64_t n, k;
    const char* tiles[4];
  };
  const Case cases[] = {
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       57344,
       8192,
       {kKMajor8, kKMajor16, kWideK32, kPlain64}},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16",
       57344,
       8192,
       {kKMajor8, kKMajor16, kPlain32, kPlain64}},
      // 266 n-blocks of 128 rows (133 of 256): just over a wave of two
      // per SM.
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       266 * 128,
       8192,
       {kKMajor8, kKMajor16, kWideK32, kPlain64}},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       128256,
       4096,
       {kKMajor8, kKMajor16, kWideK32, kPlain64}},
      // 265 n-blocks: no 256-row tiles (N / 256 is not whole).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       265 * 128,
       8192,
       {"tile=8x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma", kWideK32, kPlain64}},
      // Zero points: no k-major scales (their windows keep the wider tiles
      // out of the two-per-SM budget past 8 tokens; only unsplit checked).
      {"weight=uint4,group=128,scale=fp16,zero=int,act=fp16,out=fp16",
       57344,
       8192,
       {"tile=8x128x256,warps=1x8,stages=4,mma=wgmma", nullptr, nullptr,
        nullptr}},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
       57344,
       8192,
       {"tile=8x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=16x128x128,warps=1x8,stages=4,mma=wgmma", kPlain32,
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.spec << " N=" << c.n << " K=" << c.k);
    absl::StatusOr<Plan> plan = PlanKernels(Request(c.spec, c.n, c.k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (int i = 0; i < 4; ++i) {
      if (c.tiles[i] != nullptr) {
        EXPECT_EQ(plan->entries[i].config.text, c.tiles[i]) << "range " << i;
      }
      EXPECT_EQ(plan->entries[i].launch.grid_z, 1) << "range " << i;
    }
  }
  // 264 n-blocks fill one wave: the one-wave rule's long-split tiles hold at
  // 8 and 16 tokens.
  absl::StatusOr<Plan> one_wave = PlanKernels(Request(
      "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 264 * 128, 8192));
  ASSERT_TRUE(one_wave.ok()) << one_wave.status();
  EXPECT_EQ(one_wave->entries[0].config.text,
            "tile=8x128x256,warps=1x8,stages=4,mma=wgmma");
  EXPECT_EQ(one_wave->entries[1].config.text,
            "tile=16x128x256,warps=1x8,stages=4,mma=wgmma");
}

// k-major scales (planner v12) on the 256-row tiles of specs whose kernel
// can read them (one scale per row, no zero points), never on 128-row tiles
// (slower: 8192 x 8192's four-per-SM tile at v12) nor on specs the kernel
// refuses (zero points, 2-D block and tensor scales), which keep their 256-row
// tiles with row windows.
TEST(GemmDecodePlanTest, KMajorScalesOnWideTilesOfSpecsWithOneScalePerRow) {
  auto tiles = [](const char* spec, int64_t n, int64_t k) {
    std::vector<GemmTileConfig> out;
    absl::StatusOr<Plan> plan = PlanKernels(Request(spec, n, k));
    EXPECT_TRUE(plan.ok()) << spec << ": " << plan.status();
    if (!plan.ok()) return out;
    for (int i = 0; i < 4; ++i) {
      absl::StatusOr<GemmTileConfig> tile =
          ParseGemmTileText(plan->entries[i].config.text);
      EXPECT_TRUE(tile.ok()) << tile.status();
      if (tile.ok()) out.push_back(*tile);
    }
    return out;
  };
  const char* const kW4 = "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16";
  const char* const kW4Bf16 =
      "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16";
  for (auto [n, k] : {std::pair<int64_t, int64_t>{28672, 8192},
                      std::pair<int64_t, int64_t>{8192, 28672}}) {
    SCOPED_TRACE(::testing::Message() << "N=" << n << " K=" << k);
    // bf16 on splits of 28-32 k-tiles: 256-row k-major tiles at 8 and 16
    // tokens.
    const std::vector<GemmTileConfig> bf16 = tiles(kW4Bf16, n, k);
    ASSERT_EQ(bf16.size(), 4u);
    for (int i : {0, 1}) {
      EXPECT_EQ(bf16[i].block_n, 256);
      EXPECT_TRUE(bf16[i].k_major_scales);
    }
    // fp16: 128 rows since planner v16 (8 tokens) and v18 (16).
    const std::vector<GemmTileConfig> fp16 = tiles(kW4, n, k);
    ASSERT_EQ(fp16.size(), 4u);
    for (int i : {0, 1}) {
      EXPECT_EQ(fp16[i].block_n, 128);
      EXPECT_FALSE(fp16[i].k_major_scales);
    }
  }
  {
    const std::vector<GemmTileConfig> planned = tiles(kW4, 8192, 8192);
    ASSERT_EQ(planned.size(), 4u);
    EXPECT_EQ(FormatGemmTileText(planned[0]),
              "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4");
    EXPECT_FALSE(planned[0].k_major_scales);
  }
  // Channel-wise scales are k-major as they are: their 256-row tiles read
  // them so (bf16, 4-bit on 28672 x 8192 at 16 tokens, 8-bit on 8192 x
  // 8192 at 8).
  for (const auto& [spec, n, k, range] :
       {std::tuple<const char*, int64_t, int64_t, int>{
            "weight=uint4,group=channel,scale=bf16,act=bf16,out=bf16", 28672,
            8192, 1},
        std::tuple<const char*, int64_t, int64_t, int>{
            "weight=uint8,group=channel,scale=bf16,act=bf16,out=bf16", 8192,
            8192, 0}}) {
    SCOPED_TRACE(::testing::Message() << spec << " N=" << n << " K=" << k);
    const std::vector<GemmTileConfig> planned = tiles(spec, n, k);
    ASSERT_EQ(planned.size(), 4u);
    EXPECT_EQ(planned[range].block_n, 256);
    EXPECT_TRUE(planned[range].k_major_scales);
  }
  // Specs the k-major kernel refuses keep row windows, on every layer,
  // though they do get 256-row tiles (bf16 activations where fp16 ones
  // take 128-row tiles on every layer here since v18).
  for (const char* spec :
       {"weight=uint4,group=128,scale=fp16,zero=int",
        "weight=uint4,group=128,scale=bf16,zero=float,act=bf16,out=bf16",
        "weight=uint4,group=128x128,scale=bf16,act=bf16,out=bf16",
        "weight=e4m3,group=128x128,scale=fp32,act=bf16,out=bf16",
        "weight=uint4,group=tensor,scale=bf16,act=bf16,out=bf16"}) {
    int wide = 0;
    for (auto [n, k] : kDecodeLayers) {
      SCOPED_TRACE(::testing::Message() << spec << " N=" << n << " K=" << k);
      for (const GemmTileConfig& tile : tiles(spec, n, k)) {
        EXPECT_FALSE(tile.k_major_scales) << FormatGemmTileText(tile);
        wide += tile.block_n == 256;
      }
    }
    EXPECT_GT(wide, 0) << spec;
  }
}

// A client of the original arguments (launch ABI 0: checkpoint scales only)
// never gets a layout=kmajor tile; otherwise its plan is an ABI-1 client's
// one: the same tiles, splits and grids, scales read row-major. Neither
// gets ksplit=S tiles, which clients read only from ABI 2 (planner v19).
TEST(GemmDecodePlanTest, KMajorTilesOnlyForClientsThatPassTheKMajorScales) {
  const char* const kW4 = "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16";
  auto plan_for = [](const char* spec, int64_t n, int64_t k, uint32_t abi) {
    absl::StatusOr<Plan> plan =
        PlanKernels(testing::GemmRequest(spec, n, k, "sm_90a", 132, abi));
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? *plan : Plan();
  };
  const char* const kW4Bf16 =
      "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16";
  const Plan original = plan_for(kW4Bf16, 28672, 8192, kLaunchAbiOriginal);
  const Plan current = plan_for(kW4Bf16, 28672, 8192, kLaunchAbiKMajorScales);
  ASSERT_EQ(original.entries.size(), current.entries.size());
  ASSERT_GE(current.entries.size(), 4u);
  EXPECT_EQ(current.entries[0].config.text,
            "tile=8x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
  EXPECT_EQ(current.entries[1].config.text,
            "tile=16x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
  EXPECT_EQ(original.entries[0].config.text,
            "tile=8x256x128,warps=1x8,stages=4,mma=wgmma");
  EXPECT_EQ(original.entries[1].config.text,
            "tile=16x256x128,warps=1x8,stages=4,mma=wgmma");
  // fp16 takes 128-row tiles there, the same for both.
  EXPECT_EQ(plan_for(kW4, 28672, 8192, kLaunchAbiOriginal).entries[1].config,
            plan_for(kW4, 28672, 8192, kCurrentLaunchAbi).entries[1].config);

  // Every decode layer and spec: nothing k-major for ABI 0, and the same
  // plan as ABI 1's once its k-major option is taken off.
  int k_major_current = 0;
  for (const char* spec : kDecodeSpecs) {
    for (auto [n, k] : kDecodeLayers) {
      SCOPED_TRACE(::testing::Message() << spec << " N=" << n << " K=" << k);
      const Plan old_plan = plan_for(spec, n, k, kLaunchAbiOriginal);
      const Plan new_plan = plan_for(spec, n, k, kLaunchAbiKMajorScales);
      ASSERT_EQ(old_plan.entries.size(), new_plan.entries.size());
      for (size_t i = 0; i < old_plan.entries.size(); ++i) {
        const PlanEntry& old_entry = old_plan.entries[i];
        const PlanEntry& new_entry = new_plan.entries[i];
        EXPECT_EQ(old_entry.config.text.find("layout=kmajor"),
                  std::string::npos)
            << old_entry.config.text;
        absl::StatusOr<GemmTileConfig> old_tile =
            ParseGemmTileText(old_entry.config.text);
        absl::StatusOr<GemmTileConfig> new_tile =
            ParseGemmTileText(new_entry.config.text);
        ASSERT_TRUE(old_tile.ok() && new_tile.ok()) << new_entry.config.text;
        EXPECT_FALSE(old_tile->k_major_scales);
        k_major_current += new_tile->k_major_scales;
        GemmTileConfig without = *new_tile;
        without.k_major_scales = false;
        EXPECT_EQ(*old_tile, without) << new_entry.config.text;
        EXPECT_EQ(old_entry.m_min, new_entry.m_min);
        EXPECT_EQ(old_entry.m_max, new_entry.m_max);
        EXPECT_EQ(old_entry.launch.grid_x, new_entry.launch.grid_x);
        EXPECT_EQ(old_entry.launch.grid_y, new_entry.launch.grid_y);
        EXPECT_EQ(old_entry.launch.grid_z, new_entry.launch.grid_z);
        EXPECT_EQ(old_entry.launch.m_per_block_x,
                  new_entry.launch.m_per_block_x);
      }
    }
  }
  // The 256-row tiles of bf16 and of groups of 32 on the long-split layers.
  EXPECT_EQ(k_major_current, 8);
  // ksplit=S tiles only from ABI 2: 4096 x 4096 at 8 tokens, and 8-bit
  // weights at 16 (an ABI-2 loader parses any ksplit text).
  const Plan k_split = plan_for(kW4, 4096, 4096, kLaunchAbiKSplitTiles);
  EXPECT_NE(k_split.entries[0].config.text.find(",ksplit=8"),
            std::string::npos);
  const char* const kW8 = "weight=uint8,group=128,scale=fp16,act=fp16,out=fp16";
  const Plan w8_abi2 = plan_for(kW8, 4096, 4096, kLaunchAbiKSplitTiles);
  EXPECT_EQ(w8_abi2.entries[1].config.text,
            "tile=16x16x512,warps=1x8,stages=4,mma=wgmma,ksplit=8");
  const Plan w8_abi1 = plan_for(kW8, 4096, 4096, kLaunchAbiKMajorScales);
  EXPECT_EQ(w8_abi1.entries[1].config.text.find("ksplit"), std::string::npos)
      << w8_abi1.entries[1].config.text;
  for (uint32_t abi : {kLaunchAbiOriginal, kLaunchAbiKMajorScales}) {
    for (const char* spec : kDecodeSpecs) {
      for (auto [n, k] : kDecodeLayers) {
        for (const PlanEntry& entry : plan_for(spec, n, k, abi).entries) {
          EXPECT_EQ(entry.config.text.find("ksplit"), std::string::npos)
              << abi << " " << entry.config.text;
        }
      }
    }
  }
}

// The plan key records the launch ABI of GEMM requests (kernels/planner.h,
// PlanKeyLaunchAbi), never of dequant ones, whose kernels take no GemmArgs.
TEST(GemmDecodePlanTest, PlanKeyLaunchAbiIsTheGemmRequestsOwn) {
  KernelRequest request =
      testing::GemmRequest("weight=uint4,group=128,scale=fp16", 28672, 8192,
                           "sm_90a", 132, kLaunchAbiOriginal);
  EXPECT_EQ(PlanKeyLaunchAbi(request), kLaunchAbiOriginal);
  request.launch_abi = kCurrentLaunchAbi;
  EXPECT_EQ(PlanKeyLaunchAbi(request), kCurrentLaunchAbi);
  request.family = KernelFamily::kDequant;
  EXPECT_EQ(PlanKeyLaunchAbi(request), kLaunchAbiOriginal);
  // And a request that never set it is planned for the oldest layout.
  EXPECT_EQ(KernelRequest().launch_abi, kLaunchAbiOriginal);
}

TEST(GemmDecodePlanTest, WgmmaTileTextRoundTripsAndValidates) {
  GemmTileConfig tile;
  tile.mma = GemmMma::kWgmma;
  tile.block_m = 8;
  tile.block_n = 128;
  tile.block_k = 128;
  tile.warps_m = 1;
  tile.warps_n = 8;
  tile.stages = 10;
  const std::string text = FormatGemmTileText(tile);
  EXPECT_EQ(text, "tile=8x128x128,warps=1x8,stages=10,mma=wgmma");
  absl::StatusOr<GemmTileConfig> parsed = ParseGemmTileText(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, tile);
  EXPECT_TRUE(ValidateGemmTile(tile, 256, 256).ok());
  EXPECT_FALSE(
      ParseGemmTileText("tile=8x128x128,warps=1x8,stages=10,mma=x").ok());
  // Options: copy=bulk, scales=pre, layout=kmajor, then blocks=N, wgmma
  // tiles only.
  for (const char* options :
       {",copy=bulk", ",scales=pre", ",copy=bulk,scales=pre", ",blocks=3",
        ",scales=pre,blocks=1", ",copy=bulk,scales=pre,blocks=4",
        ",layout=kmajor", ",scales=pre,layout=kmajor,blocks=2"}) {
    const std::string with = text + options;
    absl::StatusOr<GemmTileConfig> optioned = ParseGemmTileText(with);
    ASSERT_TRUE(optioned.ok()) << with << ": " << optioned.status();
    EXPECT_EQ(FormatGemmTileText(*optioned), with);
    EXPECT_TRUE(ValidateGemmTile(*optioned, 256, 256).ok()) << with;
  }
  EXPECT_TRUE(ParseGemmTileText(text + ",scales=pre")->prescaled_scales);
  EXPECT_TRUE(ParseGemmTileText(text + ",layout=kmajor")->k_major_scales);
  EXPECT_FALSE(ParseGemmTileText(text + ",layout=kmajor,scales=pre").ok());
  EXPECT_FALSE(ParseGemmTileText(text + ",layout=nmajor").ok());
  // order=grouped: last, on 64-token wgmma tiles only; the stub reorders
  // the blocks only then.
  const std::string prefill_text =
      "tile=64x128x128,warps=1x8,stages=4,mma=wgmma";
  for (const char* options :
       {",order=grouped", ",scales=pre,blocks=2,order=grouped"}) {
    const std::string with = prefill_text + options;
    absl::StatusOr<GemmTileConfig> optioned = ParseGemmTileText(with);
    ASSERT_TRUE(optioned.ok()) << with << ": " << optioned.status();
    EXPECT_TRUE(optioned->grouped_order);
    EXPECT_EQ(FormatGemmTileText(*optioned), with);
    EXPECT_TRUE(ValidateGemmTile(*optioned, 256, 256).ok()) << with;
  }
  EXPECT_FALSE(
      ParseGemmTileText(prefill_text + ",order=grouped,blocks=2").ok());
  EXPECT_FALSE(ParseGemmTileText(prefill_text + ",order=linear").ok());
  // 128-token tiles (planned above M = 128 since v29): one 64-row block per
  // warpgroup, at most two warpgroups; order=grouped applies to them too.
  for (const char* valid : {"tile=128x128x128,warps=1x8,stages=4,mma=wgmma",
                            "tile=128x64x64,warps=1x4,stages=3,mma=wgmma",
                            "tile=128x128x64,warps=1x8,stages=4,mma=wgmma,"
                            "order=grouped",
                            "tile=256x128x64,warps=1x8,stages=4,mma=wgmma",
                            "tile=256x128x128,warps=1x8,stages=3,mma=wgmma,"
                            "order=grouped"}) {
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(valid);
    ASSERT_TRUE(tile.ok()) << valid << ": " << tile.status();
    EXPECT_TRUE(ValidateGemmTile(*tile, 256, 256).ok()) << valid;
    EXPECT_EQ(WgmmaBlocksPerSm(*tile), 1) << valid;
  }
  for (const char* invalid : {"tile=128x256x128,warps=1x8,stages=4,mma=wgmma",
                              "tile=128x256x64,warps=1x16,stages=3,mma=wgmma",
                              "tile=256x256x64,warps=1x8,stages=3,mma=wgmma",
                              "tile=256x256x64,warps=1x16,stages=3,mma=wgmma",
                              "tile=512x128x64,warps=1x8,stages=3,mma=wgmma"}) {
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(invalid);
    ASSERT_TRUE(tile.ok()) << invalid << ": " << tile.status();
    EXPECT_FALSE(ValidateGemmTile(*tile, 512, 512).ok()) << invalid;
  }
  // Parsed, but not valid below 64 tokens.
  absl::StatusOr<GemmTileConfig> small_grouped =
      ParseGemmTileText(text + ",order=grouped");
  ASSERT_TRUE(small_grouped.ok()) << small_grouped.status();
  EXPECT_FALSE(ValidateGemmTile(*small_grouped, 256, 256).ok());
  EXPECT_FALSE(
      ParseGemmTileText("tile=16x64x128,warps=1x4,stages=4,order=grouped")
          .ok());
  {
    GemmTileConfig sync_grouped;
    sync_grouped.grouped_order = true;
    EXPECT_FALSE(ValidateGemmTile(sync_grouped, 256, 256).ok());
    const KernelRequest request =
        Request("weight=uint4,group=128,scale=fp16", 8192, 8192);
    GemmTileConfig prefill = *ParseGemmTileText(
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma,order=grouped");
    for (bool grouped : {false, true}) {
      prefill.grouped_order = grouped;
      absl::StatusOr<KernelSource> stub = GenerateStub(
          request,
          MakeGemmPlanEntry(65, 128, prefill, request.spec, request.shape, 1,
                            GemmSharedMemoryLimit(request.gpu))
              .config);
      ASSERT_TRUE(stub.ok()) << stub.status();
      EXPECT_EQ(stub->source.find("grouped_block_order") != std::string::npos,
                grouped);
      EXPECT_NE(stub->source.find(grouped ? "block.m, block.n"
                                          : "blockIdx.x, blockIdx.y"),
                std::string::npos);
    }
  }
  EXPECT_FALSE(
      ParseGemmTileText("tile=16x64x128,warps=1x4,stages=4,layout=kmajor")
          .ok());
  // blocks=N sets the launch bounds' blocks per SM (the register cap).
  absl::StatusOr<GemmTileConfig> three = ParseGemmTileText(text + ",blocks=3");
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(three->blocks_per_sm, 3);
  EXPECT_EQ(WgmmaBlocksPerSm(*three), 3);
  EXPECT_EQ(WgmmaBlocksPerSm(tile), 2);  // 8 stages: the rule's two
  for (const char* bad_blocks :
       {",blocks=0", ",blocks=5", ",blocks=03",
        ",blocks=", ",blocks=3,blocks=3", ",blocks=3,scales=pre"}) {
    EXPECT_FALSE(ParseGemmTileText(text + bad_blocks).ok()) << bad_blocks;
  }
  EXPECT_FALSE(
      ParseGemmTileText("tile=16x64x128,warps=1x4,stages=4,blocks=2").ok());
  GemmTileConfig sync_blocks = *three;
  sync_blocks.mma = GemmMma::kSync;
  sync_blocks.block_m = 16;
  sync_blocks.warps_n = 4;
  sync_blocks.stages = 4;
  EXPECT_FALSE(ValidateGemmTile(sync_blocks, 256, 256).ok());
  // ksplit=S (after layout=kmajor, before blocks=N): 8- and 16-token wgmma
  // tiles whose warps, S per 16-row n-unit, split each k-tile.
  for (const char* k_split :
       {"tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4",
        "tile=16x16x512,warps=1x8,stages=5,mma=wgmma,ksplit=8",
        "tile=8x16x512,warps=1x8,stages=6,mma=wgmma,ksplit=8,blocks=3",
        "tile=8x64x256,warps=1x8,stages=4,mma=wgmma,layout=kmajor,ksplit=2",
        "tile=8x64x1024,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1"}) {
    absl::StatusOr<GemmTileConfig> parsed_split = ParseGemmTileText(k_split);
    ASSERT_TRUE(parsed_split.ok()) << k_split << ": " << parsed_split.status();
    EXPECT_GT(parsed_split->warp_split_k, 1);
    EXPECT_EQ(FormatGemmTileText(*parsed_split), k_split);
    EXPECT_TRUE(ValidateGemmTile(*parsed_split, 4096, 4096).ok()) << k_split;
  }
  for (const char* bad_split :
       {",ksplit=3", ",ksplit=1", ",ksplit=16",
        ",ksplit=", ",ksplit=4,ksplit=4", ",blocks=2,ksplit=4",
        ",ksplit=4,layout=kmajor"}) {
    EXPECT_FALSE(
        ParseGemmTileText(std::string("tile=8x32x1024,warps=1x8,stages=3,"
                                      "mma=wgmma") +
                          bad_split)
            .ok())
        << bad_split;
  }
  EXPECT_FALSE(
      ParseGemmTileText("tile=16x64x128,warps=1x4,stages=4,ksplit=4").ok());
  // Parsed, but not a tile: BN not 16 rows per n-unit warp set, fewer warps
  // than slices, 32 tokens, slices of part of a 64-column unit, copy=bulk.
  for (const char* illegal :
       {"tile=8x64x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4",
        "tile=8x8x512,warps=1x4,stages=3,mma=wgmma,ksplit=8",
        "tile=32x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4",
        "tile=8x32x128,warps=1x8,stages=3,mma=wgmma,ksplit=4",
        "tile=8x32x2048,warps=1x8,stages=3,mma=wgmma,ksplit=4",
        "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,copy=bulk,ksplit=4"}) {
    absl::StatusOr<GemmTileConfig> parsed_illegal = ParseGemmTileText(illegal);
    ASSERT_TRUE(parsed_illegal.ok()) << illegal;
    EXPECT_FALSE(ValidateGemmTile(*parsed_illegal, 4096, 4096).ok()) << illegal;
  }
  EXPECT_FALSE(ParseGemmTileText(text + ",scales=pre,copy=bulk").ok());
  EXPECT_FALSE(ParseGemmTileText(text + ",scales=pre,scales=pre").ok());
  EXPECT_FALSE(ParseGemmTileText(text + ",scales=post").ok());
  EXPECT_FALSE(
      ParseGemmTileText("tile=16x64x128,warps=1x4,stages=4,scales=pre").ok());
  GemmTileConfig sync_prescaled = *ParseGemmTileText(text + ",scales=pre");
  sync_prescaled.mma = GemmMma::kSync;
  sync_prescaled.block_m = 16;
  sync_prescaled.warps_n = 4;
  sync_prescaled.stages = 4;
  EXPECT_FALSE(ValidateGemmTile(sync_prescaled, 256, 256).ok());
  sync_prescaled.prescaled_scales = false;  // the option alone was refused
  EXPECT_TRUE(ValidateGemmTile(sync_prescaled, 256, 256).ok());
  GemmTileConfig bad = tile;
  bad.block_m = 24;
  EXPECT_FALSE(ValidateGemmTile(bad, 256, 256).ok());
  bad = tile;
  bad.warps_n = 2;
  EXPECT_FALSE(ValidateGemmTile(bad, 256, 256).ok());
  bad = tile;
  bad.warps_n = 12;  // three warpgroups
  EXPECT_FALSE(ValidateGemmTile(bad, 256, 256).ok());
  // Four warpgroups of one 64-row block each (512 threads).
  GemmTileConfig four_groups = tile;
  four_groups.block_n = 256;
  four_groups.warps_n = 16;
  EXPECT_TRUE(ValidateGemmTile(four_groups, 256, 256).ok());
  EXPECT_EQ(four_groups.Threads(), 512);
  EXPECT_EQ(WgmmaBlocksPerSm(four_groups), 2);  // 4 accumulators
  four_groups.block_m = 16;                     // 8: 64 registers spill
  EXPECT_EQ(WgmmaBlocksPerSm(four_groups), 1);
  GemmTileConfig two_groups = tile;
  two_groups.block_m = 32;
  two_groups.block_n = 128;  // one row block: 16 accumulators
  EXPECT_EQ(WgmmaBlocksPerSm(two_groups), 2);
  two_groups.block_m = 64;  // 32
  EXPECT_EQ(WgmmaBlocksPerSm(two_groups), 2);
  two_groups.block_n = 256;  // two row blocks: 64
  EXPECT_EQ(WgmmaBlocksPerSm(two_groups), 1);
  bad = tile;
  bad.block_n = 512;  // four 64-row blocks per warpgroup
  EXPECT_FALSE(ValidateGemmTile(bad, 512, 256).ok());
  bad = tile;
  bad.stages = 2;
  EXPECT_FALSE(ValidateGemmTile(bad, 256, 256).ok());
  bad = tile;
  bad.stages = 13;
  EXPECT_FALSE(ValidateGemmTile(bad, 256, 256).ok());

  // The bulk weight copy is a wgmma option, spelled last.
  GemmTileConfig bulk = tile;
  bulk.bulk_weights = true;
  EXPECT_EQ(FormatGemmTileText(bulk),
            "tile=8x128x128,warps=1x8,stages=10,mma=wgmma,copy=bulk");
  parsed = ParseGemmTileText(FormatGemmTileText(bulk));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, bulk);
  EXPECT_TRUE(ValidateGemmTile(bulk, 256, 256).ok());
  EXPECT_FALSE(ParseGemmTileText("tile=8x128x128,warps=1x8,stages=10,"
                                 "mma=wgmma,copy=tma")
                   .ok());
  EXPECT_FALSE(
      ParseGemmTileText("tile=8x128x128,warps=1x8,stages=10,copy=bulk").ok());
  GemmTileConfig sync_bulk;
  sync_bulk.bulk_weights = true;
  EXPECT_FALSE(ValidateGemmTile(sync_bulk, 256, 256).ok());
}

TEST(GemmDecodePlanTest, CodegenRefusesWgmmaOffHopperAndMismatchedSkeleton) {
  const KernelRequest hopper =
      Request("weight=uint4,group=128,scale=fp16", 256, 256);
  absl::StatusOr<Plan> plan = PlanKernels(hopper);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const KernelConfig wgmma = plan->entries[0].config;
  ASSERT_EQ(wgmma.skeleton, kGemmWgmmaSkeleton);
  EXPECT_TRUE(GenerateStub(hopper, wgmma).ok());
  const KernelRequest ampere =
      Request("weight=uint4,group=128,scale=fp16", 256, 256, "sm_80");
  EXPECT_EQ(GenerateStub(ampere, wgmma).status().code(),
            absl::StatusCode::kInvalidArgument);
  KernelConfig mismatched = wgmma;
  mismatched.skeleton = kGemmSkeleton;
  EXPECT_EQ(GenerateStub(hopper, mismatched).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hummingd
