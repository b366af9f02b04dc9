// Planner v44 (kernels/gemm_decode_short_splits.h, bench/decode-notes.md
// v87): at 32 and 64 tokens, a 128-row two-warpgroup tile whose splits hold
// at most 4 k-tiles gives way to its 64-row one-warpgroup half in half the
// splits (the same blocks, half the split-K partials); long, odd or few
// splits, wider weights and other tiles keep what they had. Planner v51:
// 8-bit weights with fp16 activations at 32 tokens too, and their
// pre-scaled 64-token tile (ShortSplitPrescaledHalfTile).

#include "kernels/gemm_decode_short_splits.h"

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "kernels/gemm_config.h"
#include "kernels/launch_abi.h"
#include "kernels/planner.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

using testing::DecodeRangeEntry;
using testing::GemmRequest;
using testing::SpecOf;
using testing::TileOf;

constexpr const char* kFp16 = testing::kUint4Fp16;
constexpr const char* kBf16 = testing::kUint4Bf16;
constexpr char kUint8[] = "weight=uint8,group=128,scale=fp16";
constexpr char kE4m3[] = "weight=e4m3,group=128,scale=fp16";
constexpr char kUint8Bf16[] =
    "weight=uint8,group=128,scale=bf16,act=bf16,out=bf16";

// `half` is the tile `text` in `splits` splits.
void ExpectSplitTile(const std::optional<SplitTile>& half, const char* text,
                     int64_t splits) {
  ASSERT_TRUE(half.has_value());
  EXPECT_EQ(FormatGemmTileText(half->tile), text);
  EXPECT_EQ(half->splits, splits);
}

constexpr int kSmemLimit = 227 * 1024;

// The plan's text and splits for the top of decode range `range`.
std::pair<std::string, int64_t> Planned(const char* spec, int64_t n, int64_t k,
                                        int range) {
  absl::StatusOr<Plan> plan =
      PlanKernels(GemmRequest(spec, n, k, "sm_90a", 132));
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {"", 0};
  const PlanEntry entry = DecodeRangeEntry(*plan, range);
  return {entry.config.text, entry.launch.grid_z};
}

TEST(GemmDecodeShortSplitsTest, PlannedWhereMeasured) {
  // 4096 x 4096: 32 k-tiles of 128 columns in 8 splits of 4 -> 4 of 8.
  for (const char* spec : {kFp16, kBf16}) {
    EXPECT_EQ(Planned(spec, 4096, 4096, 2),
              std::make_pair(
                  std::string("tile=32x64x128,warps=1x4,stages=4,mma=wgmma"),
                  int64_t{4}))
        << spec;
    EXPECT_EQ(Planned(spec, 4096, 4096, 3),
              std::make_pair(
                  std::string("tile=64x64x128,warps=1x4,stages=4,mma=wgmma"),
                  int64_t{4}))
        << spec;
  }
  // 8-bit weights with fp16 activations (planner v51): the 32-token half
  // tile, and the pre-scaled 64-token one with 128-column k-tiles.
  for (const char* spec : {kUint8, kE4m3}) {
    EXPECT_EQ(Planned(spec, 4096, 4096, 2),
              std::make_pair(
                  std::string("tile=32x64x128,warps=1x4,stages=4,mma=wgmma"),
                  int64_t{4}))
        << spec;
    EXPECT_EQ(Planned(spec, 4096, 4096, 3),
              std::make_pair(std::string("tile=64x64x128,warps=1x4,stages=4,"
                                         "mma=wgmma,scales=pre"),
                             int64_t{4}))
        << spec;
    // Long splits keep their tiles at 64 tokens (4096 x 14336, 8 splits of
    // 28 k-tiles; at 16 and 32 they are EightBitLongSplitHalfTile's), and
    // so do odd splits (6144 x 4096 in 5).
    EXPECT_EQ(Planned(spec, 4096, 14336, 3).first,
              "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre")
        << spec;
    EXPECT_EQ(Planned(spec, 6144, 4096, 3).first,
              "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre,early=1")
        << spec;
  }
  // Long splits (6144 x 4096: 5 of 6.4 k-tiles; 4096 x 14336, 8192 x 8192)
  // and 8-bit weights with bf16 activations (unmeasured) keep the 128-row
  // tile, and 256-column k-tiles keep theirs (8192 x 4096 at 32 tokens: 4
  // splits of 4, asked for a client before k-split tiles: later ones take
  // warpgroup k-slices there since planner v62); 6144 x 4096's unequal
  // splits pre-scaled since planner v77.
  EXPECT_EQ(Planned(kFp16, 6144, 4096, 3),
            std::make_pair(std::string("tile=64x128x128,warps=1x8,stages=4,"
                                       "mma=wgmma,scales=pre"),
                           int64_t{5}));
  EXPECT_EQ(Planned(kFp16, 4096, 14336, 3),
            std::make_pair(
                std::string("tile=64x128x128,warps=1x8,stages=4,mma=wgmma"),
                int64_t{8}));
  EXPECT_EQ(Planned(kFp16, 8192, 8192, 3),
            std::make_pair(
                std::string("tile=64x128x128,warps=1x8,stages=4,mma=wgmma"),
                int64_t{4}));
  EXPECT_EQ(Planned(kUint8Bf16, 4096, 4096, 2).first,
            "tile=32x128x128,warps=1x8,stages=4,mma=wgmma");
  absl::StatusOr<Plan> before_k_split = PlanKernels(
      GemmRequest(kFp16, 8192, 4096, "sm_90a", 132, kLaunchAbiKMajorScales));
  ASSERT_TRUE(before_k_split.ok()) << before_k_split.status();
  EXPECT_EQ(DecodeRangeEntry(*before_k_split, 2).config.text,
            "tile=32x128x256,warps=1x8,stages=3,mma=wgmma");
  EXPECT_EQ(DecodeRangeEntry(*before_k_split, 2).launch.grid_z, 4);
  EXPECT_EQ(Planned(kFp16, 8192, 4096, 2).first,
            "tile=32x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,"
            "early=1");
}

TEST(GemmDecodeShortSplitsTest, TheRuleHoldsAtItsEdges) {
  const QuantSpec fp16 = SpecOf(kFp16);
  const LayerShape layer{4096, 4096};
  const GemmTileConfig tile64 =
      TileOf("tile=64x128x128,warps=1x8,stages=4,mma=wgmma");
  // 8 splits of 4 k-tiles: the half tile in 4.
  ExpectSplitTile(ShortSplitHalfTile(tile64, 8, fp16, layer, kSmemLimit),
                  "tile=64x64x128,warps=1x4,stages=4,mma=wgmma", 4);
  // 6 splits of 5-6 k-tiles: too long; 4 splits of 8: too long.
  EXPECT_FALSE(ShortSplitHalfTile(tile64, 6, fp16, layer, kSmemLimit));
  EXPECT_FALSE(ShortSplitHalfTile(tile64, 4, fp16, layer, kSmemLimit));
  // 16 splits of 2 (even, short): half in 8; odd or fewer than 4: kept.
  EXPECT_TRUE(ShortSplitHalfTile(tile64, 16, fp16, layer, kSmemLimit));
  EXPECT_FALSE(ShortSplitHalfTile(tile64, 9, fp16, {4096, 2048}, kSmemLimit));
  EXPECT_FALSE(ShortSplitHalfTile(tile64, 2, fp16, {4096, 1024}, kSmemLimit));
  // 8-bit weights with fp16 activations at 32 tokens only (not at 16 or
  // 64, not with bf16 activations).
  const GemmTileConfig tile32 =
      TileOf("tile=32x128x128,warps=1x8,stages=4,mma=wgmma");
  ExpectSplitTile(
      ShortSplitHalfTile(tile32, 8, SpecOf(kUint8), layer, kSmemLimit),
      "tile=32x64x128,warps=1x4,stages=4,mma=wgmma", 4);
  EXPECT_FALSE(
      ShortSplitHalfTile(tile32, 8, SpecOf(kUint8Bf16), layer, kSmemLimit));
  EXPECT_FALSE(
      ShortSplitHalfTile(TileOf("tile=16x128x128,warps=1x8,stages=4,mma=wgmma"),
                         8, SpecOf(kUint8), layer, kSmemLimit));
  EXPECT_FALSE(ShortSplitHalfTile(tile32, 8, SpecOf("weight=uint6,group=128"),
                                  layer, kSmemLimit));
  // Not at 16 tokens, nor on other tiles (launch bounds, pre-scaled,
  // 256-column k-tiles, mma.sync), nor for 8-bit weights at 64 tokens.
  EXPECT_FALSE(
      ShortSplitHalfTile(TileOf("tile=16x128x128,warps=1x8,stages=4,mma=wgmma"),
                         8, fp16, layer, kSmemLimit));
  EXPECT_FALSE(ShortSplitHalfTile(
      TileOf("tile=64x128x128,warps=1x8,stages=4,mma=wgmma,blocks=3"), 8, fp16,
      layer, kSmemLimit));
  EXPECT_FALSE(ShortSplitHalfTile(
      TileOf("tile=64x128x128,warps=1x8,stages=4,mma=wgmma,scales=pre"), 8,
      fp16, layer, kSmemLimit));
  EXPECT_FALSE(
      ShortSplitHalfTile(TileOf("tile=32x128x256,warps=1x8,stages=3,mma=wgmma"),
                         4, fp16, layer, kSmemLimit));
  EXPECT_FALSE(ShortSplitHalfTile(TileOf("tile=64x128x128,warps=1x8,stages=4"),
                                  8, fp16, layer, kSmemLimit));
  EXPECT_FALSE(
      ShortSplitHalfTile(tile64, 8, SpecOf(kUint8), layer, kSmemLimit));
  // A shared-memory limit the half tile does not fit.
  EXPECT_FALSE(ShortSplitHalfTile(tile64, 8, fp16, layer, 16 * 1024));
}

// Planner v74 (sweep fo): integer zero points' three-stage 64-token tile
// halves into four stages, and uint8's five-stage pre-scaled one into the
// four-stage pre-scaled half; three-stage tiles of other specs, and other
// token counts, keep their stages; and the planner takes both on 4096².
TEST(GemmDecodeShortSplitsTest, ZeroPointHalvesTakeFourStages) {
  const LayerShape layer{4096, 4096};
  const GemmTileConfig three_stages =
      TileOf("tile=64x128x128,warps=1x8,stages=3,mma=wgmma");
  for (const char* spec :
       {"weight=uint4,group=128,scale=fp16,zero=int",
        "weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16",
        "weight=uint4,group=64,scale=fp16,zero=int"}) {
    ExpectSplitTile(
        ShortSplitHalfTile(three_stages, 8, SpecOf(spec), layer, kSmemLimit),
        "tile=64x64x128,warps=1x4,stages=4,mma=wgmma", 4);
  }
  // No zero points, float ones, or scales other than 16-bit (unmeasured):
  // the stages the tile had.
  for (const char* spec :
       {kFp16, "weight=uint4,group=128,scale=fp16,zero=float",
        "weight=uint4,group=128,scale=fp32,zero=int"}) {
    ExpectSplitTile(
        ShortSplitHalfTile(three_stages, 8, SpecOf(spec), layer, kSmemLimit),
        "tile=64x64x128,warps=1x4,stages=3,mma=wgmma", 4);
  }
  // The rule's edges hold with zero points: odd or long splits keep the tile.
  EXPECT_FALSE(ShortSplitHalfTile(
      three_stages, 6, SpecOf("weight=uint4,group=128,scale=fp16,zero=int"),
      layer, kSmemLimit));
  EXPECT_FALSE(ShortSplitHalfTile(
      three_stages, 9, SpecOf("weight=uint4,group=128,scale=fp16,zero=int"),
      {4096, 2048}, kSmemLimit));
  // Where four stages do not fit, three (a limit between the two halves).
  ExpectSplitTile(
      ShortSplitHalfTile(three_stages, 8,
                         SpecOf("weight=uint4,group=128,scale=fp16,zero=int"),
                         layer, 80 * 1024),
      "tile=64x64x128,warps=1x4,stages=3,mma=wgmma", 4);
  // At 32 tokens a three-stage tile halves as it is.
  ExpectSplitTile(ShortSplitHalfTile(
                      TileOf("tile=32x128x128,warps=1x8,stages=3,mma=wgmma"), 8,
                      SpecOf("weight=uint4,group=128,scale=fp16,zero=int"),
                      layer, kSmemLimit),
                  "tile=32x64x128,warps=1x4,stages=3,mma=wgmma", 4);
  // uint8: five stages with integer zero points, six without.
  constexpr char kUint8Zero[] = "weight=uint8,group=128,scale=fp16,zero=int";
  const GemmTileConfig five_stages =
      TileOf("tile=64x128x64,warps=1x8,stages=5,mma=wgmma,scales=pre");
  ExpectSplitTile(ShortSplitPrescaledHalfTile(
                      five_stages, 8, SpecOf(kUint8Zero), layer, kSmemLimit),
                  "tile=64x64x128,warps=1x4,stages=4,mma=wgmma,scales=pre", 4);
  EXPECT_FALSE(ShortSplitPrescaledHalfTile(five_stages, 8, SpecOf(kUint8),
                                           layer, kSmemLimit));
  EXPECT_FALSE(ShortSplitPrescaledHalfTile(
      TileOf("tile=64x128x64,warps=1x8,stages=4,mma=wgmma,scales=pre"), 8,
      SpecOf(kUint8Zero), layer, kSmemLimit));
  // Planned: the four-stage halves, groups of 32 pre-scaled (planner v73's
  // clause), uint8 in 4 splits instead of 8.
  for (const auto& [spec, text, splits] :
       {std::tuple<const char*, const char*, int64_t>{
            "weight=uint4,group=128,scale=fp16,zero=int",
            "tile=64x64x128,warps=1x4,stages=4,mma=wgmma", 4},
        {"weight=uint4,group=32,scale=fp16,zero=int",
         "tile=64x64x128,warps=1x4,stages=4,mma=wgmma,scales=pre", 4},
        {kUint8Zero, "tile=64x64x128,warps=1x4,stages=4,mma=wgmma,scales=pre",
         4}}) {
    EXPECT_EQ(Planned(spec, 4096, 4096, 3),
              (std::pair<std::string, int64_t>{text, splits}))
        << spec;
  }
}

// Planner v46: 6144 x 4096 at 16 tokens (three per SM, 8 splits) and at 32
// tokens (two per SM, 5 splits) takes the 64-row halves three per SM; since
// planner v60 in groups of 32 only (groups of 128 and 64 take warpgroup
// k-slices there, GemmDecodeKSplitTest, and since planner v64 so do 8-bit
// weights with fp16 activations at 32 tokens), and since planner v69 at 32
// tokens only (groups of 32 take the slices at 16, where they won in sweep
// ff, but lost at 32).
TEST(GemmDecodeShortSplitsTest, ThreePerSmHalvesPlannedWhereMeasured) {
  for (const char* spec_128 : {kFp16, kBf16}) {
    EXPECT_EQ(Planned(spec_128, 6144, 4096, 1).first,
              "tile=16x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,"
              "early=1");
    const std::string spec =
        absl::StrReplaceAll(spec_128, {{"group=128", "group=32"}});
    EXPECT_EQ(Planned(spec.c_str(), 6144, 4096, 1),
              std::make_pair(std::string("tile=16x64x512,warps=1x16,stages=4,"
                                         "mma=wgmma,ksplit=4,blocks=1,early=1"),
                             int64_t{1}))
        << spec;
    EXPECT_EQ(Planned(spec.c_str(), 6144, 4096, 2),
              std::make_pair(std::string("tile=32x64x128,warps=1x4,stages=4,"
                                         "mma=wgmma,blocks=3"),
                             int64_t{4}))
        << spec;
  }
  // In groups of 128 the rule still fires through the planner where the
  // warpgroup k-slices do not apply (3584 x 6144: 56 64-row blocks, under
  // 6/11 of the SMs; unmeasured there, as on every layer but the two of
  // sweep cs).
  EXPECT_EQ(Planned(kFp16, 3584, 6144, 1),
            std::make_pair(std::string("tile=16x64x256,warps=1x4,stages=4,"
                                       "mma=wgmma,blocks=3"),
                           int64_t{6}));
  EXPECT_EQ(Planned(kFp16, 3584, 6144, 2),
            std::make_pair(std::string("tile=32x64x128,warps=1x4,stages=4,"
                                       "mma=wgmma,blocks=3"),
                           int64_t{7}));
  // The layers whose 16-token half tile lost in sweep cr keep their tiles.
  EXPECT_EQ(Planned(kFp16, 4096, 4096, 1).first,
            "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1,"
            "early=1");
  EXPECT_EQ(Planned(kFp16, 4096, 14336, 1).first,
            "tile=16x128x256,warps=1x8,stages=4,mma=wgmma,early=1");
  EXPECT_EQ(Planned(kFp16, 8192, 8192, 1).first,
            "tile=16x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,"
            "early=1");
  // 8-bit weights with fp16 activations take the 32-token half (planner
  // v51) where planner v64's two-warpgroup k-slices do not apply (4608 x
  // 4096: 72 64-row blocks, under 3/5 of the SMs; on 6144 x 4096 the slices
  // won), with bf16 activations they keep it; their 16-token tile stays.
  for (const char* spec : {kUint8, kE4m3}) {
    EXPECT_EQ(Planned(spec, 4608, 4096, 2).first,
              "tile=32x64x128,warps=1x4,stages=4,mma=wgmma,blocks=3")
        << spec;
    EXPECT_EQ(Planned(spec, 6144, 4096, 2),
              std::make_pair(std::string("tile=32x64x256,warps=1x8,stages=6,"
                                         "mma=wgmma,ksplit=2,blocks=1,early=1"),
                             int64_t{1}))
        << spec;
    EXPECT_EQ(Planned(spec, 6144, 4096, 1).first,
              "tile=16x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=3")
        << spec;
  }
  EXPECT_EQ(Planned(kUint8Bf16, 6144, 4096, 2).first,
            "tile=32x128x128,warps=1x8,stages=4,mma=wgmma");
}

// Each condition of ThreePerSmHalfTile, on a case that only it rules out.
TEST(GemmDecodeShortSplitsTest, ThreePerSmHalvesHoldAtTheirEdges) {
  const QuantSpec fp16 = SpecOf(kFp16);
  const LayerShape layer{6144, 4096};
  const GemmTileConfig packed16 =
      TileOf("tile=16x128x128,warps=1x8,stages=4,mma=wgmma,blocks=3");
  const GemmTileConfig plain32 =
      TileOf("tile=32x128x128,warps=1x8,stages=4,mma=wgmma");
  auto three_per_sm = [&](const GemmTileConfig& tile, int64_t splits,
                          LayerShape shape) {
    return ThreePerSmHalfTile(tile, splits, fp16, shape, 132, kSmemLimit);
  };
  constexpr char kHalf16[] =
      "tile=16x64x256,warps=1x4,stages=4,mma=wgmma,blocks=3";
  constexpr char kHalf32[] =
      "tile=32x64x128,warps=1x4,stages=4,mma=wgmma,blocks=3";
  // 16 tokens: an even split count of >= 4 halves, with 256-column k-tiles.
  ExpectSplitTile(three_per_sm(packed16, 8, layer), kHalf16, 4);
  ExpectSplitTile(three_per_sm(packed16, 4, {6144, 2048}), kHalf16, 2);
  // Odd (7 splits of 4 k-tiles), fewer than 4 (2 of 4), splits of more
  // than 4 k-tiles (6 of 5.3), K that 256 columns do not divide: kept.
  EXPECT_FALSE(three_per_sm(packed16, 7, {6144, 3584}));
  EXPECT_FALSE(three_per_sm(packed16, 2, {6144, 1024}));
  EXPECT_FALSE(three_per_sm(packed16, 6, layer));
  EXPECT_FALSE(three_per_sm(packed16, 8, {6144, 3968}));
  // Nor the two-per-SM 16-token tile, nor one with a copy option.
  EXPECT_FALSE(three_per_sm(
      TileOf("tile=16x128x128,warps=1x8,stages=4,mma=wgmma"), 8, layer));
  EXPECT_FALSE(three_per_sm(
      TileOf("tile=16x128x128,warps=1x8,stages=4,mma=wgmma,copy=bulk,blocks=3"),
      8, layer));
  // 32 tokens: an odd split count -> as many splits of >= 4 k-tiles as
  // three per SM hold (396 / 96 = 4), or fewer where K is short (6144 x
  // 1536: 12 k-tiles, 3 splits), or as 4608 x 3584 (7 -> 5).
  ExpectSplitTile(three_per_sm(plain32, 5, layer), kHalf32, 4);
  ExpectSplitTile(three_per_sm(plain32, 5, {6144, 1536}), kHalf32, 3);
  ExpectSplitTile(three_per_sm(plain32, 7, {4608, 3584}), kHalf32, 5);
  // An even count (ShortSplitHalfTile's, or kept).
  EXPECT_FALSE(three_per_sm(plain32, 6, layer));
  // No fewer splits than before (3584 x 3584: 7 -> 7, tied in sweep cs).
  EXPECT_FALSE(three_per_sm(plain32, 7, {3584, 3584}));
  // Splits longer than 8 k-tiles (3584 x 18944: 7 splits of 21).
  EXPECT_FALSE(three_per_sm(plain32, 9, {3584, 18944}));
  // Two per SM would hold them: 2048 x 4096 (32 x 8 = 256 blocks) and,
  // exactly at the edge, 4224 x 2048 (66 x 4 = 264).
  EXPECT_FALSE(three_per_sm(plain32, 9, {2048, 4096}));
  EXPECT_FALSE(three_per_sm(plain32, 5, {4224, 2048}));
  // Fewer than 2 (17024 x 1024: 266 half blocks, one split).
  EXPECT_FALSE(three_per_sm(plain32, 3, {17024, 1024}));
  // Other tiles, wider weights, fine groups no decode sweep measured, a
  // shared-memory limit the half tile does not fit.
  EXPECT_FALSE(three_per_sm(
      TileOf("tile=32x128x256,warps=1x8,stages=3,mma=wgmma"), 5, layer));
  EXPECT_FALSE(three_per_sm(
      TileOf("tile=64x128x128,warps=1x8,stages=4,mma=wgmma"), 5, layer));
  for (const char* other :
       {"tile=32x128x128,warps=1x8,stages=4,mma=wgmma,scales=pre",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma,blocks=3",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma,copy=warprun",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma,early=1",
        "tile=32x128x128,warps=1x8,stages=3,mma=wgmma",
        "tile=32x128x128,warps=1x8,stages=4"}) {
    EXPECT_FALSE(three_per_sm(TileOf(other), 5, layer)) << other;
  }
  // 8-bit weights: the 32-token half with fp16 activations only.
  ExpectSplitTile(
      ThreePerSmHalfTile(plain32, 5, SpecOf(kUint8), layer, 132, kSmemLimit),
      kHalf32, 4);
  EXPECT_FALSE(
      ThreePerSmHalfTile(packed16, 8, SpecOf(kUint8), layer, 132, kSmemLimit));
  EXPECT_FALSE(ThreePerSmHalfTile(plain32, 5, SpecOf(kUint8Bf16), layer, 132,
                                  kSmemLimit));
  for (const GemmTileConfig& tile : {packed16, plain32}) {
    const int64_t splits = tile.block_m == 16 ? 8 : 5;
    EXPECT_FALSE(ThreePerSmHalfTile(tile, splits,
                                    SpecOf("weight=uint4,group=16,scale=fp16"),
                                    layer, 132, kSmemLimit));
    EXPECT_FALSE(ThreePerSmHalfTile(tile, splits, fp16, layer, 132, 16 * 1024));
  }
}

// Planner v51: each condition of ShortSplitPrescaledHalfTile, on a case
// that only it rules out.
TEST(GemmDecodeShortSplitsTest, PrescaledHalfHoldsAtItsEdges) {
  const QuantSpec uint8 = SpecOf(kUint8);
  const LayerShape layer{4096, 4096};
  constexpr char kRangeTile[] =
      "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre";
  constexpr char kHalf[] =
      "tile=64x64x128,warps=1x4,stages=4,mma=wgmma,scales=pre";
  const GemmTileConfig range_tile = TileOf(kRangeTile);
  auto half_of = [&](const GemmTileConfig& tile, int64_t splits,
                     const QuantSpec& spec, LayerShape shape) {
    return ShortSplitPrescaledHalfTile(tile, splits, spec, shape, kSmemLimit);
  };
  // 8 splits of 8 k-tiles of 64 columns: the half in 4; e4m3 too; so do 4
  // splits of 4 (4096 x 1024: 2) and the early=1 form of the tile.
  ExpectSplitTile(half_of(range_tile, 8, uint8, layer), kHalf, 4);
  ExpectSplitTile(half_of(range_tile, 8, SpecOf(kE4m3), layer), kHalf, 4);
  ExpectSplitTile(half_of(range_tile, 4, uint8, {4096, 1024}), kHalf, 2);
  ExpectSplitTile(
      half_of(TileOf(std::string(kRangeTile).append(",early=1").c_str()), 8,
              uint8, layer),
      kHalf, 4);
  // Splits of more than 8 k-tiles (4 of 16), odd (7 of 4.6) or fewer than
  // 4 (2 of 8 on 4096 x 1024): kept.
  EXPECT_FALSE(half_of(range_tile, 4, uint8, layer));
  EXPECT_FALSE(half_of(range_tile, 7, uint8, {4096, 2048}));
  EXPECT_FALSE(half_of(range_tile, 2, uint8, {4096, 1024}));
  // K that 128-column k-tiles do not divide (channel scales, 10 splits of
  // 6.5 k-tiles of 64).
  EXPECT_FALSE(half_of(range_tile, 10,
                       SpecOf("weight=uint8,group=channel,scale=fp16"),
                       {4096, 4160}));
  // Other weights and activations: 4-bit, 6-bit, bf16, fine groups.
  for (const char* other :
       {testing::kUint4Fp16, "weight=uint6,group=128,scale=fp16", kUint8Bf16,
        "weight=uint8,group=16,scale=fp16"}) {
    EXPECT_FALSE(half_of(range_tile, 8, SpecOf(other), layer)) << other;
  }
  // Other tiles: each field of the range tile changed once.
  for (const char* other :
       {"tile=32x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre",
        "tile=64x256x64,warps=1x16,stages=6,mma=wgmma,scales=pre",
        "tile=64x128x128,warps=1x8,stages=6,mma=wgmma,scales=pre",
        "tile=64x128x64,warps=1x8,stages=5,mma=wgmma,scales=pre",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre,blocks=2",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre,layout=kmajor",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,copy=bulk,scales=pre",
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,copy=warprun,scales=pre",
        "tile=64x128x64,warps=1x8,stages=6"}) {
    EXPECT_FALSE(half_of(TileOf(other), 8, uint8, layer)) << other;
  }
  // A shared-memory limit the half does not fit.
  EXPECT_FALSE(
      ShortSplitPrescaledHalfTile(range_tile, 8, uint8, layer, 64 * 1024));
}

// Planner v52: 8-bit 16- and 32-token tiles in 8 or more long splits.
TEST(GemmDecodeShortSplitsTest, EightBitLongSplitHalvesPlannedWhereMeasured) {
  for (const char* spec : {kUint8, kE4m3}) {
    // 4096 x 14336 and 4096 x 11008: 8 splits -> 6; 3584 x 18944: 9 -> 7.
    for (int range : {1, 2}) {
      const std::string text =
          range == 1 ? "tile=16x64x128,warps=1x4,stages=4,mma=wgmma,blocks=3"
                     : "tile=32x64x128,warps=1x4,stages=4,mma=wgmma,blocks=3";
      // (4096 x 14336 at 16 tokens: unsplit k-split blocks since planner
      // v59, GemmDecodeKSplitTest.EightBitLongKSixteenWarpBlocksWhereMeasured.)
      if (range == 2) {
        EXPECT_EQ(Planned(spec, 4096, 14336, range),
                  std::make_pair(text, int64_t{6}))
            << spec;
      }
      EXPECT_EQ(Planned(spec, 4096, 11008, range),
                std::make_pair(text, int64_t{6}))
          << spec;
      EXPECT_EQ(Planned(spec, 3584, 18944, range),
                std::make_pair(text, int64_t{7}))
          << spec;
    }
    // Fewer splits before, where the half lost: 5120 x 13824 (6), 8192 x
    // 8192 (4; since planner v65 two-warpgroup k-slices there, so 8192 x
    // 9216, past their K, holds the case).
    EXPECT_EQ(Planned(spec, 5120, 13824, 2),
              std::make_pair(
                  std::string("tile=32x128x128,warps=1x8,stages=4,mma=wgmma"),
                  int64_t{6}))
        << spec;
    EXPECT_EQ(Planned(spec, 8192, 9216, 1),
              std::make_pair(
                  std::string("tile=16x128x128,warps=1x8,stages=4,mma=wgmma"),
                  int64_t{4}))
        << spec;
  }
}

// Each condition of EightBitLongSplitHalfTile, on a case that only it rules
// out.
TEST(GemmDecodeShortSplitsTest, EightBitLongSplitHalvesHoldAtTheirEdges) {
  const QuantSpec uint8 = SpecOf(kUint8);
  const LayerShape layer{4096, 14336};
  const GemmTileConfig tile16 =
      TileOf("tile=16x128x128,warps=1x8,stages=4,mma=wgmma");
  const GemmTileConfig tile32 =
      TileOf("tile=32x128x128,warps=1x8,stages=4,mma=wgmma");
  auto half_of = [&](const GemmTileConfig& tile, int64_t splits,
                     const QuantSpec& spec, LayerShape shape) {
    return EightBitLongSplitHalfTile(tile, splits, spec, shape, 132,
                                     kSmemLimit);
  };
  ExpectSplitTile(half_of(tile16, 8, uint8, layer),
                  "tile=16x64x128,warps=1x4,stages=4,mma=wgmma,blocks=3", 6);
  ExpectSplitTile(half_of(tile32, 8, SpecOf(kE4m3), layer),
                  "tile=32x64x128,warps=1x4,stages=4,mma=wgmma,blocks=3", 6);
  // Fewer than 8 splits (7 of 16 k-tiles); short splits (8 of 4 on 4096 x
  // 4096: ShortSplitHalfTile's); no fewer splits than before (2048 x 14336:
  // 32 half blocks, 12 splits would fit); K that 128 columns do not divide.
  EXPECT_FALSE(half_of(tile32, 7, uint8, layer));
  EXPECT_FALSE(half_of(tile32, 8, uint8, {4096, 4096}));
  EXPECT_FALSE(half_of(tile32, 8, uint8, {2048, 14336}));
  EXPECT_FALSE(
      half_of(tile32, 8, SpecOf("weight=uint8,group=channel"), {4096, 14400}));
  // Blocks that two per SM would hold: 12800 x 14336 has 200 half blocks,
  // of which three per SM hold one split.
  EXPECT_FALSE(half_of(tile32, 8, uint8, {12800, 14336}));
  // Other weights and activations: 4-bit, 6-bit, bf16, fine groups.
  for (const char* other :
       {testing::kUint4Fp16, "weight=uint6,group=128,scale=fp16", kUint8Bf16,
        "weight=uint8,group=16,scale=fp16"}) {
    EXPECT_FALSE(half_of(tile32, 8, SpecOf(other), layer)) << other;
  }
  // Other tiles: each field changed once.
  for (const char* other :
       {"tile=64x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=8x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=32x256x128,warps=1x16,stages=4,mma=wgmma",
        "tile=32x128x256,warps=1x8,stages=4,mma=wgmma",
        "tile=32x128x128,warps=1x8,stages=3,mma=wgmma",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma,blocks=2",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma,scales=pre",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma,copy=bulk",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma,copy=warprun",
        "tile=32x128x128,warps=1x8,stages=4,mma=wgmma,early=1",
        "tile=32x128x128,warps=1x8,stages=4"}) {
    EXPECT_FALSE(half_of(TileOf(other), 8, uint8, layer)) << other;
  }
  // A shared-memory limit the half does not fit three per SM.
  EXPECT_FALSE(
      EightBitLongSplitHalfTile(tile32, 8, uint8, layer, 132, 16 * 1024));
}

}  // namespace
}  // namespace hummingd
