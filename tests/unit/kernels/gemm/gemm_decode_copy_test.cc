// The weights' copy path of the Hopper decode tiles (planner v43,
// bench/decode-notes.md v86): `copy=warprun` round-trips in its place
// (the copy option's, beside copy=bulk), validates, needs
// kLaunchAbiWarpRunWeights and reaches the stub as WgmmaTile's last
// argument; and the planner's rules (kernels/gemm_decode_tile_options.cc:
// bulk copies on the 64-row half tile with fp16 activations over blocks of
// at least 6 k-tiles, warp-run slots on the 8-token k-split tile with bf16
// activations over blocks of 7-8) hold at their edges.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/gemm_config.h"
#include "kernels/gemm_decode_plan.h"
#include "kernels/gemm_decode_tile_options.h"
#include "kernels/launch_abi.h"
#include "kernels/planner.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

using testing::DecodeRangeEntry;
using testing::GemmRequest;
using testing::SpecOf;

constexpr char kFp16[] = "weight=uint4,group=128,scale=fp16";
constexpr char kBf16[] = "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16";
constexpr char kKSplitTile[] =
    "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4";
constexpr char kWarpRunKSplitTile[] =
    "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,copy=warprun,ksplit=4";
constexpr char kKSplit16RowTile[] =
    "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8";
constexpr char kHalfTile[] =
    "tile=8x64x256,warps=1x4,stages=4,mma=wgmma,blocks=4";
constexpr char kBulkHalfTile[] =
    "tile=8x64x256,warps=1x4,stages=4,mma=wgmma,copy=bulk,blocks=4";

TEST(GemmDecodeCopyTest, WarpRunTextRoundTripsInItsPlaceAndValidates) {
  for (const std::string& text :
       {std::string(kWarpRunKSplitTile),
        std::string(kWarpRunKSplitTile) + ",early=1",
        std::string("tile=16x128x256,warps=1x8,stages=4,mma=wgmma,"
                    "copy=warprun,scales=pre,blocks=3,early=1")}) {
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(text);
    ASSERT_TRUE(tile.ok()) << text << ": " << tile.status();
    EXPECT_TRUE(tile->warp_run_weights) << text;
    EXPECT_FALSE(tile->bulk_weights) << text;
    EXPECT_EQ(FormatGemmTileText(*tile), text);
    EXPECT_TRUE(ValidateGemmTile(*tile, 8192, 8192).ok()) << text;
    EXPECT_EQ(GemmTileLaunchAbi(*tile), kLaunchAbiWarpRunWeights) << text;
  }
  // One copy option, in the copy option's place.
  for (const char* bad :
       {"tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,copy=bulk,copy=warprun",
        "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,copy=warprun,copy=bulk",
        "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4,copy=warprun",
        "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,copy=warp",
        "tile=16x64x128,warps=1x4,stages=4,copy=warprun"}) {
    EXPECT_FALSE(ParseGemmTileText(bad).ok()) << bad;
  }
  // Built by hand: not on mma.sync tiles, not beside bulk copies.
  GemmTileConfig sync_tile;
  sync_tile.warp_run_weights = true;
  EXPECT_FALSE(ValidateGemmTile(sync_tile, 256, 256).ok());
  GemmTileConfig both = *ParseGemmTileText(kBulkHalfTile);
  both.warp_run_weights = true;
  EXPECT_FALSE(ValidateGemmTile(both, 4096, 14336).ok());
  // Without it a tile needs no newer client than before.
  EXPECT_EQ(GemmTileLaunchAbi(*ParseGemmTileText(kKSplitTile)),
            kLaunchAbiKSplitTiles);
  EXPECT_EQ(GemmTileLaunchAbi(*ParseGemmTileText(kBulkHalfTile)),
            kLaunchAbiOriginal);
}

TEST(GemmDecodeCopyTest, WarpRunSlotsNeedRunsHoldingWholeWarpShares) {
  // 256 threads, 2 runs of 512 chunks (4-bit) or 1024 (8-bit): four or
  // eight slots per thread, a warp's share inside one run.
  EXPECT_TRUE(
      WgmmaTakesWarpRunWeights(*ParseGemmTileText(kKSplitTile), SpecOf(kBf16)));
  EXPECT_TRUE(WgmmaTakesWarpRunWeights(*ParseGemmTileText(kKSplitTile),
                                       SpecOf("weight=uint8,group=128")));
  // 8x16x512 ksplit=8 in 4-bit: one run of 256 chunks, one slot per thread,
  // nothing to share.
  EXPECT_FALSE(WgmmaTakesWarpRunWeights(
      *ParseGemmTileText(
          "tile=8x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=4"),
      SpecOf(kFp16)));
  // Bulk copies have no slots; mma.sync tiles no such copier.
  EXPECT_FALSE(WgmmaTakesWarpRunWeights(*ParseGemmTileText(kBulkHalfTile),
                                        SpecOf(kFp16)));
  EXPECT_FALSE(WgmmaTakesWarpRunWeights(
      *ParseGemmTileText("tile=16x64x128,warps=1x4,stages=4"), SpecOf(kFp16)));
}

// The stub passes warp-run slots as WgmmaTile's last argument (after the
// early count, 0 where unset), and a tile without the option keeps its stub
// text byte for byte (session 33: the other 185 planned kernels
// SASS-identical with and without this change).
TEST(GemmDecodeCopyTest, StubNamesWarpRunSlotsOnlyWhereSet) {
  const KernelRequest request = GemmRequest(kBf16, 8192, 8192);
  const auto stub_for = [&](const char* text) {
    return GenerateStub(
        request,
        MakeGemmPlanEntry(1, 8, *ParseGemmTileText(text), request.spec,
                          request.shape, 1, GemmSharedMemoryLimit(request.gpu))
            .config);
  };
  absl::StatusOr<KernelSource> plain = stub_for(kKSplitTile);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_NE(plain->source.find(
                "WgmmaTile<8, 32, 1024, 2, 3, false, false, false, 4>;"),
            std::string::npos)
      << plain->source;
  absl::StatusOr<KernelSource> warp_run = stub_for(kWarpRunKSplitTile);
  ASSERT_TRUE(warp_run.ok()) << warp_run.status();
  EXPECT_NE(warp_run->source.find("WgmmaTile<8, 32, 1024, 2, 3, false, false, "
                                  "false, 4, 2, 0, true>;"),
            std::string::npos)
      << warp_run->source;
  absl::StatusOr<KernelSource> early = stub_for(
      "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,copy=warprun,"
      "ksplit=4,early=1");
  ASSERT_TRUE(early.ok()) << early.status();
  EXPECT_NE(early->source.find("WgmmaTile<8, 32, 1024, 2, 3, false, false, "
                               "false, 4, 2, 1, true>;"),
            std::string::npos)
      << early->source;
}

std::string PlannedText(const char* spec, int64_t n, int64_t k, int range,
                        uint32_t launch_abi = kCurrentLaunchAbi) {
  absl::StatusOr<Plan> plan =
      PlanKernels(GemmRequest(spec, n, k, "sm_90a", 132, launch_abi));
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? DecodeRangeEntry(*plan, range).config.text : "";
}

TEST(GemmDecodeCopyTest, PlannedWhereMeasuredWinning) {
  // Warp-run slots: bf16 on 8192 x 8192's k-split tile (blocks of 8
  // k-tiles), every M of the range, only for clients of ABI 6.
  const std::string bf16_8192 = std::string(kWarpRunKSplitTile) + ",early=1";
  EXPECT_EQ(PlannedText(kBf16, 8192, 8192, 0), bf16_8192);
  EXPECT_EQ(PlannedText(kBf16, 8192, 8192, 0, kLaunchAbiEarlyTiles),
            std::string(kKSplitTile) + ",early=1");
  EXPECT_EQ(PlannedText(kFp16, 8192, 8192, 0),
            std::string(kKSplitTile) + ",early=1");
  // Blocks of 4 k-tiles (6144 x 4096) lost with it.
  EXPECT_EQ(PlannedText(kBf16, 6144, 4096, 0), kKSplitTile);
  // Bulk copies: fp16 on the half tile over blocks of 7 (4096 x 14336) and
  // 6 (4096 x 12288), for any client (since planner v55 only those that
  // cannot load k-split tiles: the others take 16-row k-split blocks
  // there); not over blocks of 5-6 (4096 x 11008) or 4-5 (4096 x 9728), not
  // with bf16, not with fine groups.
  EXPECT_EQ(PlannedText(kFp16, 4096, 14336, 0), kKSplit16RowTile);
  EXPECT_EQ(PlannedText(kFp16, 4096, 14336, 0, kLaunchAbiOriginal),
            kBulkHalfTile);
  EXPECT_EQ(PlannedText(kFp16, 4096, 12288, 0), kKSplit16RowTile);
  EXPECT_EQ(PlannedText(kFp16, 4096, 12288, 0, kLaunchAbiKMajorScales),
            kBulkHalfTile);
  EXPECT_EQ(PlannedText(kFp16, 4096, 11008, 0), kHalfTile);
  EXPECT_EQ(PlannedText(kFp16, 4096, 9728, 0), kHalfTile);
  EXPECT_EQ(PlannedText(kBf16, 4096, 14336, 0), kKSplit16RowTile);
  EXPECT_EQ(PlannedText(kBf16, 4096, 14336, 0, kLaunchAbiKMajorScales),
            kHalfTile);
  EXPECT_EQ(PlannedText("weight=uint4,group=64,scale=fp16", 4096, 14336, 0,
                        kLaunchAbiKMajorScales),
            kHalfTile);
  // Neither above 8 tokens.
  for (int range = 1; range < 4; ++range) {
    for (const char* spec : {kFp16, kBf16}) {
      for (auto [n, k] : testing::kIssue5Layers) {
        const std::string text = PlannedText(spec, n, k, range);
        EXPECT_EQ(text.find("copy="), std::string::npos)
            << spec << " " << n << "x" << k << " range " << range << ": "
            << text;
      }
    }
  }
}

// A client of ABI 6 gets the plans of ABI 5 but for copy=warprun: same
// ranges, tiles (early=N included), splits and launches, so the early tests
// (which plan at ABI 5) cover the current ABI's prologue options too.
TEST(GemmDecodeCopyTest, CurrentAbiPlansDifferFromAbi5OnlyByWarpRunSlots) {
  int warp_run_entries = 0;
  for (const char* spec : testing::kIssue5TableSpecs) {
    for (auto [n, k] : testing::kIssue5Layers) {
      SCOPED_TRACE(::testing::Message() << spec << " " << n << "x" << k);
      absl::StatusOr<Plan> current =
          PlanKernels(GemmRequest(spec, n, k, "sm_90a", 132));
      absl::StatusOr<Plan> abi5 = PlanKernels(
          GemmRequest(spec, n, k, "sm_90a", 132, kLaunchAbiEarlyTiles));
      ASSERT_TRUE(current.ok()) << current.status();
      ASSERT_TRUE(abi5.ok()) << abi5.status();
      ASSERT_EQ(current->entries.size(), abi5->entries.size());
      for (size_t i = 0; i < current->entries.size(); ++i) {
        const PlanEntry& c = current->entries[i];
        const PlanEntry& o = abi5->entries[i];
        EXPECT_EQ(c.m_min, o.m_min);
        EXPECT_EQ(c.m_max, o.m_max);
        EXPECT_EQ(c.launch.grid_z, o.launch.grid_z);
        std::string text = c.config.text;
        const size_t at = text.find(",copy=warprun");
        if (at != std::string::npos) {
          ++warp_run_entries;
          text.erase(at, std::string(",copy=warprun").size());
        }
        EXPECT_EQ(text, o.config.text);
      }
    }
  }
  // bf16 8192 x 8192's 8-token range.
  EXPECT_EQ(warp_run_entries, 1);
}

TEST(GemmDecodeCopyTest, RulesHoldAtTheirEdges) {
  const GemmTileConfig half = *ParseGemmTileText(kHalfTile);
  const GemmTileConfig k_split = *ParseGemmTileText(kKSplitTile);
  const QuantSpec fp16 = SpecOf(kFp16);
  const QuantSpec bf16 = SpecOf(kBf16);
  const LayerShape n4096_k14336{.n = 4096, .k = 14336};  // 56 k-tiles of 256
  struct BulkCase {
    GemmTileConfig tile;
    QuantSpec spec;
    int64_t splits;
    bool wins;
  };
  GemmTileConfig three_stages = half;
  three_stages.stages = 3;
  GemmTileConfig two_per_sm = half;
  two_per_sm.blocks_per_sm = 2;
  const BulkCase bulk_cases[] = {
      {half, fp16, 8, true},    // 7 k-tiles a block
      {half, fp16, 9, true},    // 6-7
      {half, fp16, 10, false},  // 5-6
      {half, bf16, 8, false},
      {half, SpecOf("weight=uint8,group=128,scale=fp16"), 8, false},
      {half, SpecOf("weight=uint4,group=32,scale=fp16"), 8, false},
      // Unmeasured, extrapolated from groups of 128 (BulkWeightsWin).
      {half, SpecOf("weight=uint4,group=channel,scale=fp16"), 8, true},
      {three_stages, fp16, 8, false},
      {two_per_sm, fp16, 8, false},
      {k_split, fp16, 1, false},
  };
  for (const BulkCase& c : bulk_cases) {
    EXPECT_EQ(BulkWeightsWin(c.tile, c.splits, c.spec, n4096_k14336), c.wins)
        << FormatGemmTileText(c.tile) << " " << FormatSpecText(c.spec)
        << " splits " << c.splits;
  }
  struct WarpRunCase {
    QuantSpec spec;
    int64_t k;
    bool wins;
  };
  const WarpRunCase warp_run_cases[] = {
      {bf16, 8192, true},   // 8 k-tiles of 1024
      {bf16, 7168, true},   // 7
      {bf16, 6144, false},  // 6
      {bf16, 9216, false},  // 9
      {bf16, 4096, false},  // 4
      {fp16, 8192, false},
      {SpecOf("weight=uint8,group=128,scale=bf16,act=bf16,out=bf16"), 8192,
       false},
  };
  for (const WarpRunCase& c : warp_run_cases) {
    EXPECT_EQ(
        WarpRunWeightsWin(k_split, 1, c.spec, LayerShape{.n = 8192, .k = c.k}),
        c.wins)
        << FormatSpecText(c.spec) << " K=" << c.k;
  }
  EXPECT_FALSE(
      WarpRunWeightsWin(half, 8, bf16, LayerShape{.n = 4096, .k = 14336}));
}

}  // namespace
}  // namespace hummingd
