// The wgmma tile text (kernels/gemm_config.h): it round-trips and
// validates every option, and codegen refuses wgmma tiles off Hopper or
// with the other skeleton.

#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/gemm_config.h"
#include "kernels/gemm_decode_plan.h"
#include "kernels/planner.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

using testing::DecodeRequest;

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
        DecodeRequest("weight=uint4,group=128,scale=fp16", 8192, 8192);
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
      DecodeRequest("weight=uint4,group=128,scale=fp16", 256, 256);
  absl::StatusOr<Plan> plan = PlanKernels(hopper);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const KernelConfig wgmma = plan->entries[0].config;
  ASSERT_EQ(wgmma.skeleton, kGemmWgmmaSkeleton);
  EXPECT_TRUE(GenerateStub(hopper, wgmma).ok());
  const KernelRequest ampere =
      DecodeRequest("weight=uint4,group=128,scale=fp16", 256, 256, "sm_80");
  EXPECT_EQ(GenerateStub(ampere, wgmma).status().code(),
            absl::StatusCode::kInvalidArgument);
  KernelConfig mismatched = wgmma;
  mismatched.skeleton = kGemmSkeleton;
  EXPECT_EQ(GenerateStub(hopper, mismatched).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hummingd
