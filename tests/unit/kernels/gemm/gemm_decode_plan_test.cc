// Hopper's decode plan (kernels/gemm_decode_plan.h): for the layers of
// issue 5 the M <= 64 ranges are wgmma kernels whose choices are
// deterministic, legal and fill the machine, followed by the prefill ranges
// (gemm_prefill_plan_test.cc); the measured winners, the fine-group rules,
// residency padding and the split-K choice on hand-checked cases. Tiles
// planned several per SM: gemm_decode_residency_test.cc; k-major scales:
// gemm_decode_kmajor_test.cc; the tile text: wgmma_tile_text_test.cc.

#include "kernels/gemm_decode_plan.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gemm/wgmma_config.cuh"
#include "gtest/gtest.h"
#include "kernels/gemm_config.h"
#include "kernels/launch_abi.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

using testing::DecodeRangeTops;
using testing::DecodeRequest;
using testing::kIssue5Layers;
using testing::kIssue5SpecsWithGroupSizes;

TEST(GemmDecodePlanTest, HopperDecodeRangesAreWgmmaAndFillTheMachine) {
  for (const char* spec : kIssue5SpecsWithGroupSizes) {
    for (auto [n, k] : kIssue5Layers) {
      SCOPED_TRACE(::testing::Message() << spec << " N=" << n << " K=" << k);
      const KernelRequest request = DecodeRequest(spec, n, k);
      absl::StatusOr<Plan> plan = PlanKernels(request);
      ASSERT_TRUE(plan.ok()) << plan.status();
      absl::StatusOr<Plan> again = PlanKernels(request);
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(*plan, *again);
      // The decode entries cover M = 1-64 without gaps or overlap.
      size_t first_prefill = 0;
      int64_t next_m = 1;
      for (; first_prefill < plan->entries.size() &&
             plan->entries[first_prefill].m_max <= 64;
           ++first_prefill) {
        EXPECT_EQ(plan->entries[first_prefill].m_min, next_m);
        next_m = plan->entries[first_prefill].m_max + 1;
      }
      EXPECT_EQ(next_m, 65);
      const std::vector<PlanEntry> tops = DecodeRangeTops(*plan);
      ASSERT_EQ(tops.size(), 4u);
      const int64_t expected_tokens[] = {8, 16, 32, 64};
      for (int i = 0; i < 4; ++i) {
        const PlanEntry& entry = tops[i];
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
        // (And k-split warps' tiles of 512-1024 columns.) The one measured
        // exception: warpgroup slices unsplit where N / 64 fills 6/11 or
        // more of the SMs (planner v60: 6144 x 4096's 96 blocks ran
        // 0.89-0.94x the split tiles that filled them).
        const bool wide_k = tile->block_k >= 256;
        const bool short_fill_slices =
            device::wgmma_warpgroup_slices(tile->block_m, tile->block_n,
                                           tile->warp_split_k) &&
            entry.launch.grid_z == 1 && k <= 8192;
        EXPECT_GE(blocks, (short_fill_slices ? 6.0 / 11 : 0.8) * 132)
            << entry.config.text;
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
        // tokens, groups of 32 on the 32-token warpgroup k-slices (planner
        // v69), and groups of 32 and 64 at 64 tokens (planners v70 / v71).
        const bool slices = device::wgmma_warpgroup_slices(
            tile->block_m, tile->block_n, tile->warp_split_k);
        const bool group = request.spec.granularity == ScaleGranularity::kGroup;
        const bool groups_of_32 = group && request.spec.group_size == 32;
        const bool groups_of_64 = group && request.spec.group_size == 64;
        const bool bf16_half_tile =
            request.spec.activation_type == DataType::kBf16 &&
            tile->block_n == 64;
        // And fp16 4-bit groups of 128 on the two-warpgroup tile in splits
        // of unequal length (planner v77).
        const bool fp16_unequal_splits =
            group && request.spec.group_size == 128 &&
            request.spec.weight.bits == 4 &&
            request.spec.activation_type == DataType::kFp16 &&
            tile->block_n == 128 && tile->block_k == 128 && tile->stages == 4 &&
            entry.launch.grid_z > 1 &&
            (k / tile->block_k) % entry.launch.grid_z != 0;
        EXPECT_EQ(
            tile->prescaled_scales,
            (expected_tokens[i] == 64 &&
             (request.spec.weight.bits == 8 || groups_of_32 ||
              (groups_of_64 && !bf16_half_tile) || fp16_unequal_splits)) ||
                (expected_tokens[i] == 32 && slices && groups_of_32))
            << entry.config.text;
        // k-major scales exactly on the 256-row tiles (every spec here has
        // one scale per row and no zero points) but the sixteen-warp 8-bit
        // one, measured without them (planner v49), and since planner v61
        // for uint4 in groups of 128 on long splits: the 128-row 256-column
        // tiles at 16 and 32 tokens over 28 or more k-tiles, the 32-token
        // warpgroup k-slices over 16 or more.
        const bool sixteen_warp_8_bit =
            tile->warps_n == 16 && request.spec.weight.bits == 8;
        const bool uint4_group_128 =
            std::string(spec).find("uint4,group=128,") != std::string::npos;
        const int64_t split_tiles = k / tile->block_k / entry.launch.grid_z;
        const bool long_split_128_rows =
            tile->block_m >= 16 && tile->block_n == 128 &&
            tile->block_k == 256 && split_tiles >= 28;
        const bool long_32_token_slices =
            tile->block_m == 32 && tile->warp_split_k == 4 && split_tiles >= 16;
        EXPECT_EQ(tile->k_major_scales,
                  (tile->block_n == 256 && !sixteen_warp_8_bit) ||
                      (uint4_group_128 &&
                       (long_split_128_rows || long_32_token_slices)))
            << entry.config.text;
      }
      // Above the decode ranges, the 64-, 128- and 256-token tiles
      // (gemm_prefill_plan.h).
      ASSERT_GE(plan->entries.size(), first_prefill + 2);
      EXPECT_EQ(plan->entries[first_prefill].m_min, 65);
      EXPECT_EQ(plan->entries.back().m_max, kDefaultMaxM);
      for (size_t i = first_prefill; i < plan->entries.size(); ++i) {
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
        DecodeRequest("weight=uint4,group=128,scale=fp16", 8192, 8192, arch));
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (const PlanEntry& entry : plan->entries) {
      EXPECT_EQ(entry.config.skeleton, kGemmSkeleton) << arch;
    }
  }
  absl::StatusOr<Plan> narrow =
      PlanKernels(DecodeRequest("weight=uint4,group=16,scale=fp16", 48, 192));
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  for (const PlanEntry& entry : narrow->entries) {
    EXPECT_EQ(entry.config.skeleton, kGemmSkeleton);
  }
  // N = 192: one warpgroup of one 64-row block.
  absl::StatusOr<Plan> odd =
      PlanKernels(DecodeRequest("weight=uint4,group=64,scale=fp16", 192, 256));
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
// (planner v16-v18); bf16 in group scales the same since v53 (16 tokens)
// and v54 (8 and 32; before, only up to 8 k-tiles per split, else the
// 256-row k-major tiles at 8 and BK 128 at 32); short rings; splits within
// one wave; 4-bit 16-token tiles
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
      // v20); 16 and 32: one 64-row block per SM whose four warpgroups
      // split K (128, unsplit; v57), at 32 with k-major scales (v61: 16
      // k-tiles per block; so too the 128-row 256-column tiles below over
      // 28-32, at 16 and 32 tokens).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       8192,
       8192,
       {"tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4,early=1",
        "tile=16x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,early="
        "1",
        "tile=32x64x512,warps=1x16,stages=4,mma=wgmma,layout=kmajor,ksplit=4,"
        "blocks=1,early=1",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {1, 1, 1, 4}},
      // 8 tokens: k-split warps over 16-row blocks, three stages (256,
      // unsplit; planner v55, bf16 too since v56, below); 16 and 32 tokens:
      // 256-column k-tiles in 8
      // splits of 7 in 128-row blocks two per SM (256 blocks).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       4096,
       14336,
       {"tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma,early=1",
        "tile=32x128x256,warps=1x8,stages=3,mma=wgmma",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {1, 8, 8, 8}},
      // 8 tokens: k-split warps over 32-row blocks (192, unsplit; planner
      // v19); 16 and 32 tokens: warpgroup k-slices over 96 64-row blocks,
      // unsplit (planner v60; before it 64-row blocks three per SM in 4
      // splits, planner v46); 64 tokens pre-scaled in its 5 unequal splits
      // (planner v77).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       6144,
       4096,
       {"tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4,early=1",
        "tile=16x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,early="
        "1",
        "tile=32x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,early="
        "1",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma,scales=pre"},
       {1, 1, 1, 5}},
      // 224 128-row blocks need no split up to 32 tokens (256-column
      // k-tiles).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       28672,
       8192,
       {"tile=8x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma,layout=kmajor",
        "tile=32x128x256,warps=1x8,stages=3,mma=wgmma,layout=kmajor",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {1, 1, 1, 1}},
      // 32 tokens: warpgroup k-slices up to K = 28672 (v57); 16 tokens
      // keep four splits past K = 14336 (sweep dz: 1.003-1.03x there).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       8192,
       28672,
       {"tile=8x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma,layout=kmajor",
        "tile=32x64x512,warps=1x16,stages=4,mma=wgmma,layout=kmajor,ksplit=4,"
        "blocks=1,early=1",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {4, 4, 1, 4}},
      // bf16 on splits of 28-32 k-tiles takes fp16's tiles and splits: at
      // 16 tokens since planner v53 (sweep dk: 36.9-37.1 against 38.9-39.1
      // µs for the 256-row k-major tile), at 8 and 32 since v54 (sweep dl:
      // 0.95-0.99x the k-major 8x256x128 and 32x128x128 s4).
      // (With early=1 at 16 tokens since planner v67, sweeps ew / ex.)
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16",
       28672,
       8192,
       {"tile=8x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma,layout=kmajor,early=1",
        "tile=32x128x256,warps=1x8,stages=3,mma=wgmma,layout=kmajor",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {1, 1, 1, 1}},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16",
       8192,
       28672,
       {"tile=8x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma,layout=kmajor,early=1",
        "tile=32x64x512,warps=1x16,stages=4,mma=wgmma,layout=kmajor,ksplit=4,"
        "blocks=1,early=1",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {4, 4, 1, 4}},
      // 8 tokens: k-split warps over 16-row blocks (256, unsplit; v19); 16:
      // 256-column k-tiles, two per split (256 blocks, two per SM); 32 and
      // 64: 64-row blocks in 4 splits of 8 k-tiles (256 blocks; v44).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
       4096,
       4096,
       {"tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8",
        "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1,"
        "early=1",
        "tile=32x64x128,warps=1x4,stages=4,mma=wgmma",
        "tile=64x64x128,warps=1x4,stages=4,mma=wgmma"},
       {1, 1, 4, 4}},
      // 8-bit weights at 8 tokens: 128-column k-tiles (16 KB) in long
      // splits (planner v18); at 64 tokens one sixteen-warp block per SM
      // in splits of 56 k-tiles (v49), with early=1 (v67).
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
       8192,
       28672,
       {"tile=8x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=16x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=64x256x128,warps=1x16,stages=4,mma=wgmma,scales=pre,early=1"},
       {4, 4, 4, 4}},
      // Small layers: 8-bit weights at 8 tokens take k-split warps where K
      // is short (v19), else the 16-token tile's shape and splits (4096 x
      // 14336 below); at 16 tokens too over 16-row blocks (v20), three per
      // SM on 6144 x 4096 (v23); at 32 and 64 tokens on 4096 x 4096 64-row
      // blocks in 4 splits of 8 k-tiles, the 64-token one pre-scaled with
      // 128-column k-tiles, and at 32 on 6144 x 4096 (three per SM in 4
      // splits at v51) since planner v64 two-warpgroup k-slices, unsplit.
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
       4096,
       4096,
       {"tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8,early=1",
        "tile=16x16x512,warps=1x8,stages=4,mma=wgmma,ksplit=8",
        "tile=32x64x128,warps=1x4,stages=4,mma=wgmma",
        "tile=64x64x128,warps=1x4,stages=4,mma=wgmma,scales=pre"},
       {1, 1, 4, 4}},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
       6144,
       4096,
       {"tile=8x32x512,warps=1x8,stages=4,mma=wgmma,ksplit=4",
        "tile=16x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=3",
        "tile=32x64x256,warps=1x8,stages=6,mma=wgmma,ksplit=2,blocks=1,"
        "early=1",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre,early=1"},
       {1, 1, 1, 5}},
      // 8-bit weights with fp16 activations at 8 tokens: 16-row k-split
      // blocks past K = 4096, two per SM on N = 4096 and four per SM on N =
      // 8192 (planner v21); at 16 tokens 32-row k-split blocks of sixteen
      // warps, unsplit (v59); at 32 64-row blocks three per SM in 6 splits
      // (v52). On 8192 x 8192 at 16 and 32 tokens 64-row blocks of two
      // warpgroup k-slices, unsplit (planners v64 / v65).
      {"weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16",
       4096,
       14336,
       {"tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8",
        "tile=16x32x1024,warps=1x16,stages=3,mma=wgmma,ksplit=8,blocks=1,"
        "early=1",
        "tile=32x64x128,warps=1x4,stages=4,mma=wgmma,blocks=3",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre"},
       {1, 1, 6, 8}},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
       8192,
       8192,
       {"tile=8x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=4",
        "tile=16x64x256,warps=1x8,stages=6,mma=wgmma,ksplit=2,blocks=1,"
        "early=1",
        "tile=32x64x256,warps=1x8,stages=6,mma=wgmma,ksplit=2,blocks=1,"
        "early=1",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre"},
       {1, 1, 1, 4}},
      // bf16 at 16 and 32 tokens: warpgroup k-slices as for fp16 (v57;
      // and k-split warps at 8, with warp-run weight slots since v43).
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16",
       8192,
       8192,
       {"tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,copy=warprun,ksplit=4,"
        "early=1",
        "tile=16x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,early="
        "1",
        "tile=32x64x512,warps=1x16,stages=4,mma=wgmma,layout=kmajor,ksplit=4,"
        "blocks=1,early=1",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {1, 1, 1, 4}},
      // bf16 past K = 8192 on 16-row k-split blocks since planner v56.
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16",
       4096,
       14336,
       {"tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8",
        "tile=16x128x256,warps=1x8,stages=4,mma=wgmma,early=1",
        "tile=32x128x256,warps=1x8,stages=3,mma=wgmma",
        "tile=64x128x128,warps=1x8,stages=4,mma=wgmma"},
       {1, 8, 8, 8}},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(::testing::Message()
                 << e.spec << " N=" << e.n << " K=" << e.k);
    absl::StatusOr<Plan> plan = PlanKernels(DecodeRequest(e.spec, e.n, e.k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    const std::vector<PlanEntry> tops = DecodeRangeTops(*plan);
    ASSERT_EQ(tops.size(), 4u);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(tops[i].config.text, e.tiles[i]);
      EXPECT_EQ(tops[i].launch.grid_z, e.splits[i]);
    }
  }
}

// Planner v35 (sweep bs, bench/results/tile-sweep-bs-0deaee3.json): scale
// groups of 32 and 64 take group 128's tiles and splits at 8, 16 and 32
// tokens (fp16 groups of 32, M = 1 / 8: 8192 x 8192 11.31 / 11.97 µs
// against 12.94 / 13.32 for the 256-row k-major tile, 4096 x 14336 10.14 /
// 10.44 against 12.82 / 13.14, 6144 x 4096 5.70 / 6.11 against 8.15 /
// 8.33; M = 16 8192 x 8192 14.01 against 15.09), except that groups of 32
// keep the 256-row k-major tiles on splits of more than 8 k-tiles (8192 x
// 28672 and 28672 x 8192 at 8 and 16 tokens, and BK 128 at 32), with fp16
// and bf16 activations alike (bf16 in groups of 128 leaves them since
// planners v53 and v54, as fp16 does), and (planner v36) groups of 32 take
// the 64-row half of
// the long-split tile, four per SM, where group 128 runs the k-split tile past
// K = 4096 (8192 x 8192 at 8 tokens: fp16 10.99-11.33 µs at M = 1-8 against
// 11.31-11.97). The 64-token tiles were already the same. Groups of 16 were
// not measured and keep theirs.
TEST(GemmDecodePlanTest, GroupsOf32And64TakeTheGroup128Rules) {
  const auto plan_of = [](const std::string& spec, int64_t n, int64_t k) {
    absl::StatusOr<Plan> plan = PlanKernels(DecodeRequest(spec.c_str(), n, k));
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? *plan : Plan{};
  };
  for (const char* activations :
       {"scale=fp16,act=fp16,out=fp16", "scale=bf16,act=bf16,out=bf16"}) {
    for (auto [n, k] : kIssue5Layers) {
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
        // Splits of 28-32 k-tiles: groups of 32 keep the k-major tiles at
        // 8 and 16 tokens and BK 128 at 32, where groups of 128 leave them
        // (bf16 too since planner v54).
        const bool long_splits = k >= 28672 || n >= 28672;
        const bool keeps_k_major = group == 32 && long_splits;
        // Groups of 32 keep the half tile past K = 4096 where groups of 128
        // take k-split warps (planner v36): 8192 x 8192, and 4096 x 14336
        // (planner v55 with fp16 activations, v56 with bf16).
        const bool square = n == 8192 && k == 8192;
        const bool half_tile =
            group == 32 && (square || (n == 4096 && k == 14336));
        // Both plans split the same ranges (planner v40's rules do not
        // look at the scale groups).
        EXPECT_EQ(fine.entries.size(), coarse.entries.size());
        const std::vector<PlanEntry> fine_tops = DecodeRangeTops(fine);
        const std::vector<PlanEntry> coarse_tops = DecodeRangeTops(coarse);
        ASSERT_EQ(fine_tops.size(), 4u);
        ASSERT_EQ(coarse_tops.size(), 4u);
        for (int i = 0; i < 4; ++i) {
          const PlanEntry& f = fine_tops[i];
          const PlanEntry& c = coarse_tops[i];
          // Planner v61's k-major scales on long splits were measured in
          // groups of 128 only: fine groups read the same tile's scales by
          // rows (the 256-row tiles' k-major rule takes any group), and
          // without them the 16-token tile's bf16 early=1 (planner v67,
          // which needs layout=kmajor) too.
          const std::string c_text =
              c.config.text.find("x256x") == std::string::npos
                  ? absl::StrReplaceAll(
                        absl::StrReplaceAll(c.config.text,
                                            {{",layout=kmajor,early=1", ""}}),
                        {{",layout=kmajor", ""}})
                  : c.config.text;
          if (half_tile && i == 0) {
            EXPECT_EQ(c_text,
                      !square ? "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,"
                                "ksplit=8"
                      : fp16  ? "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,"
                                "ksplit=4,early=1"
                              : "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,"
                                "copy=warprun,ksplit=4,early=1");
            EXPECT_EQ(f.config.text,
                      "tile=8x64x256,warps=1x4,stages=4,mma=wgmma,blocks=4");
            EXPECT_EQ(f.launch.grid_z, square ? 4 : 8);
          } else if (keeps_k_major && i < 2) {
            EXPECT_NE(f.config.text.find("x256x128,warps=1x8,stages=4,"
                                         "mma=wgmma,layout=kmajor"),
                      std::string::npos)
                << f.config.text;
            EXPECT_NE(f.config.text, c_text);
          } else if (keeps_k_major && i == 2) {
            EXPECT_EQ(f.config.text,
                      "tile=32x128x128,warps=1x8,stages=4,mma=wgmma");
          } else if (c_text.find("x64x512,warps=1x16,stages=4,mma=wgmma,"
                                 "ksplit=4,blocks=1") != std::string::npos) {
            // Warpgroup k-slices (planner v57) were measured with groups of
            // 128 and 64: groups of 64 take them too; groups of 32 since
            // planner v69 at 16 tokens, and at 32 pre-scaled where the
            // grid fills a wave (8192 x 8192; on 6144 x 4096 they keep the
            // 64-row half three per SM in 4 splits).
            if (group == 64 || i == 1) {
              EXPECT_EQ(f.config.text, c_text);
              EXPECT_EQ(f.launch.grid_z, 1);
            } else if (square) {
              EXPECT_EQ(f.config.text,
                        "tile=32x64x512,warps=1x16,stages=4,mma=wgmma,"
                        "scales=pre,ksplit=4,blocks=1,early=1");
              EXPECT_EQ(f.launch.grid_z, 1);
            } else {
              EXPECT_EQ(f.config.text.find("ksplit"), std::string::npos)
                  << f.config.text;
              EXPECT_EQ(f.launch.grid_z, 4);
            }
          } else if (c_text.find(",copy=bulk") != std::string::npos) {
            // Bulk weight copies were measured with groups of 128 only
            // (BulkWeightsWin): the same tile and split with cp.async.
            EXPECT_EQ(absl::StrReplaceAll(c_text, {{",copy=bulk", ""}}),
                      f.config.text);
            EXPECT_EQ(f.launch.grid_z, c.launch.grid_z);
          } else if (i == 3 &&
                     (group == 32 || fp16 ||
                      c_text.find("x128x128,warps=1x8") != std::string::npos)) {
            // At 64 tokens groups of 32 and 64 scale each operand pair
            // (planners v70 / v71; groups of 64 with bf16 activations not
            // on the one-warpgroup half tile): the same tile and split,
            // pre-scaled.
            // (fp16 in groups of 128 is pre-scaled already on 6144 x 4096's
            // unequal splits, planner v77.)
            EXPECT_EQ(absl::StrReplaceAll(
                          absl::StrReplaceAll(c_text, {{",scales=pre", ""}}),
                          {{"mma=wgmma", "mma=wgmma,scales=pre"}}),
                      f.config.text);
            EXPECT_EQ(f.launch.grid_z, c.launch.grid_z);
          } else {
            EXPECT_EQ(f.config.text, c_text);
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
        // Except the warpgroup k-slices that planner v60 gives N = 6208 and
        // 5120 x 4096 at 16 and 32 tokens, and v69 8192 x 8192 with zero
        // points: groups of 32 take them at 16 tokens without zero points
        // (planner v69), not at 32 tokens short of a wave's fill, where
        // they lost (sweep ff), nor with zero points (unmeasured).
        const bool slices =
            coarse.entries[i].config.text.find(",ksplit=4,blocks=1") !=
                std::string::npos &&
            coarse.entries[i].config.text.find("x64x512,warps=1x16") !=
                std::string::npos;
        const bool zero_points =
            std::string(layer.spec_tail).find("zero=int") != std::string::npos;
        if (slices && group == 32 && (i == 2 || zero_points)) {
          EXPECT_EQ(fine.entries[i].config.text.find("ksplit"),
                    std::string::npos)
              << fine.entries[i].config.text;
          continue;
        }
        // (Their k-major scales at 32 tokens on K = 8192, planner v61, in
        // groups of 128 only.)
        EXPECT_EQ(fine.entries[i].config.text,
                  absl::StrReplaceAll(coarse.entries[i].config.text,
                                      {{",layout=kmajor", ""}}));
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
  // Shared memory as the driver allocates it: the kernels' static bytes
  // and the 1 KB reservation beside the dynamic bytes, in 128-byte units.
  // Two blocks: 116,736 bytes each. The zero-point tiles of v128 sat at
  // 115,712 dynamic bytes, and with 16 static bytes ran one per SM.
  const int two_blocks = 116736 - 1024 - kGemmStaticSharedBytes;
  EXPECT_EQ(Sm90ResidentBlocks(256, 1, two_blocks), 2);
  EXPECT_EQ(Sm90ResidentBlocks(256, 1, two_blocks + 1), 1);
  EXPECT_EQ(Sm90ResidentBlocks(256, 1, 115712),
            kGemmStaticSharedBytes > 0 ? 1 : 2);
  // Five blocks: 46,694 bytes each, of which 46,592 in whole units.
  const int five_blocks = 46592 - 1024 - kGemmStaticSharedBytes;
  EXPECT_EQ(Sm90SharedBytesForAtLeast(5), five_blocks);
  EXPECT_EQ(Sm90ResidentBlocks(128, 1, five_blocks), 5);
  EXPECT_EQ(Sm90ResidentBlocks(128, 1, five_blocks + 1), 4);
  // A kernel's own static bytes: k-split warp tiles, which run unsplit,
  // have none.
  EXPECT_EQ(Sm90ResidentBlocks(256, 1, two_blocks + kGemmStaticSharedBytes,
                               /*static_shared_bytes=*/0),
            2);
  for (int blocks = 1; blocks <= 4; ++blocks) {
    SCOPED_TRACE(blocks);
    // The fitting budget holds whatever the kernel's static bytes.
    const int fits = Sm90SharedBytesForAtLeast(blocks);
    EXPECT_EQ(Sm90ResidentBlocks(256, 1, fits), blocks);
    EXPECT_EQ(Sm90ResidentBlocks(256, 1, fits, 0), blocks);
    EXPECT_EQ(Sm90ResidentBlocks(256, 1, fits + 1), blocks - 1);
    // The padding request keeps out one more block, also in a kernel
    // without static bytes, which one byte less would let in.
    const int pads = Sm90SharedBytesForAtMost(blocks);
    EXPECT_EQ(Sm90ResidentBlocks(256, 1, pads), blocks);
    EXPECT_EQ(Sm90ResidentBlocks(256, 1, pads, 0), blocks);
    EXPECT_EQ(Sm90ResidentBlocks(256, 1, pads - 1, 0), blocks + 1);
    EXPECT_LT(pads, Sm90SharedBytesForAtLeast(blocks));
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

}  // namespace
}  // namespace hummingd
