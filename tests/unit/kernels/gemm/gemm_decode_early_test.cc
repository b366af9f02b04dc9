// early=N (planners v38-v42, bench/decode-notes.md v83, v84): the tile
// text's prologue option round-trips and validates against the ring's
// lead, its stub names the count while every other stub stays as it was,
// only clients of kLaunchAbiEarlyTiles are planned it, and the planner's
// rules (kernels/gemm_decode_tile_options.cc: 4-bit weights on two tiles over
// blocks of 7-8 k-tiles; the three-stage 8-token k-split tiles over blocks
// of 2-4 k-tiles from M = 6, or of 2 with 8-bit weights at every M;
// the 64-token pre-scaled tile over splits of 8-16 k-tiles; the last
// two with fp16 activations only; the 16-token sixteen-warp tile where its
// ring holds all of K, planner v58; the sixteen-warp pre-scaled 64-token
// tile and the 16-token k-major tile with bf16 activations, planner v67)
// hold at their edges.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_replace.h"
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

constexpr char kKSplitTile[] =
    "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4";
constexpr char kWide16TokenTile[] =
    "tile=16x128x256,warps=1x8,stages=4,mma=wgmma";
// Warpgroup k-slices (planner v57).
constexpr char kSlices16TokenTile[] =
    "tile=16x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1";
constexpr char kSlices32TokenTile[] =
    "tile=32x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1";
// 32-row k-split blocks of sixteen warps at 16 tokens (planner v24).
constexpr char kSixteenWarp16TokenTile[] =
    "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1";

TEST(GemmDecodeEarlyTest, TextRoundTripsInItsPlaceAndValidatesAgainstTheLead) {
  for (const std::string& text :
       {std::string(kKSplitTile) + ",early=1",
        std::string(kWide16TokenTile) + ",early=1",
        std::string("tile=8x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,"
                    "blocks=4,early=1"),
        std::string("tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre,"
                    "early=3,order=grouped")}) {
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(text);
    ASSERT_TRUE(tile.ok()) << text << ": " << tile.status();
    EXPECT_GT(tile->early_tiles, 0) << text;
    EXPECT_EQ(FormatGemmTileText(*tile), text);
    EXPECT_TRUE(ValidateGemmTile(*tile, 8192, 8192).ok()) << text;
    EXPECT_EQ(GemmTileLaunchAbi(*tile), kLaunchAbiEarlyTiles) << text;
  }
  // Out of place, repeated or malformed: refused by the parser.
  for (const char* bad :
       {",early=1,blocks=2", ",order=grouped,early=1", ",early=1,early=1",
        ",early=", ",early=x", ",early=-1", ",early=0", ",early=01"}) {
    EXPECT_FALSE(ParseGemmTileText(std::string(kWide16TokenTile) + bad).ok())
        << bad;
  }
  EXPECT_FALSE(
      ParseGemmTileText("tile=16x64x128,warps=1x4,stages=4,early=1").ok());
  // Parsed, but not a prologue of that many tiles: N must be under the
  // ring's lead (stages - 2, or 2 for three-stage ksplit tiles), since N
  // equal to it is the default, written without the option.
  for (const char* out_of_range :
       {"tile=16x128x256,warps=1x8,stages=4,mma=wgmma,early=2",
        "tile=16x128x256,warps=1x8,stages=3,mma=wgmma,early=1",
        "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4,early=2"}) {
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(out_of_range);
    ASSERT_TRUE(tile.ok()) << out_of_range << ": " << tile.status();
    EXPECT_FALSE(ValidateGemmTile(*tile, 8192, 8192).ok()) << out_of_range;
  }
  GemmTileConfig sync_early;
  sync_early.early_tiles = 1;
  EXPECT_FALSE(ValidateGemmTile(sync_early, 256, 256).ok());
  // Without the option a tile needs no newer client than before.
  EXPECT_EQ(GemmTileLaunchAbi(*ParseGemmTileText(kWide16TokenTile)),
            kLaunchAbiOriginal);
}

// The stub passes the count as WgmmaTile's last argument, and a tile
// without the option keeps its stub text byte for byte (the planned cubins
// of main were SASS-identical with and without this change).
TEST(GemmDecodeEarlyTest, StubNamesTheCountOnlyWhereSet) {
  const KernelRequest request =
      GemmRequest("weight=uint4,group=128,scale=fp16", 8192, 8192);
  GemmTileConfig tile = *ParseGemmTileText(kWide16TokenTile);
  const auto stub_for = [&](const GemmTileConfig& config) {
    return GenerateStub(
        request, MakeGemmPlanEntry(9, 16, config, request.spec, request.shape,
                                   4, GemmSharedMemoryLimit(request.gpu))
                     .config);
  };
  absl::StatusOr<KernelSource> plain = stub_for(tile);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_NE(plain->source.find("WgmmaTile<16, 128, 256, 2, 4, false>;"),
            std::string::npos)
      << plain->source;
  tile.early_tiles = 1;
  absl::StatusOr<KernelSource> early = stub_for(tile);
  ASSERT_TRUE(early.ok()) << early.status();
  EXPECT_NE(early->source.find("WgmmaTile<16, 128, 256, 2, 4, false, false, "
                               "false, 1, 2, 1>;"),
            std::string::npos)
      << early->source;
}

// The planners' texts for a client of the ABI that introduced early=N:
// without the options of later ABIs (copy=warprun,
// gemm_decode_copy_test.cc), so that these tests see the prologue option
// alone.
Plan PlanOf(const char* spec, int64_t n, int64_t k,
            uint32_t launch_abi = kLaunchAbiEarlyTiles) {
  absl::StatusOr<Plan> plan =
      PlanKernels(GemmRequest(spec, n, k, "sm_90a", 132, launch_abi));
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : Plan{};
}

// The tile text serving the top of decode range `range` (0-3: M = 8, 16,
// 32, 64).
std::string PlannedText(const char* spec, int64_t n, int64_t k, int range,
                        uint32_t launch_abi = kLaunchAbiEarlyTiles) {
  return DecodeRangeEntry(PlanOf(spec, n, k, launch_abi), range).config.text;
}

// The tile text serving M tokens.
std::string TextAtM(const char* spec, int64_t n, int64_t k, int64_t m,
                    uint32_t launch_abi = kLaunchAbiEarlyTiles) {
  const Plan plan = PlanOf(spec, n, k, launch_abi);
  const PlanEntry* entry = plan.EntryFor(m);
  EXPECT_NE(entry, nullptr) << m;
  return entry != nullptr ? entry->config.text : "";
}

TEST(GemmDecodeEarlyTest, PlannedWhereMeasuredWinning) {
  for (const char* spec :
       {"weight=uint4,group=128,scale=fp16",
        "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16"}) {
    SCOPED_TRACE(spec);
    // 8192 x 8192: blocks of 8 k-tiles in the k-split tile; warpgroup
    // k-slices at 16 and 32 tokens take early=1 wherever planned (planner
    // v57, sweep dw).
    EXPECT_EQ(PlannedText(spec, 8192, 8192, 0),
              std::string(kKSplitTile) + ",early=1");
    EXPECT_EQ(PlannedText(spec, 8192, 8192, 1),
              std::string(kSlices16TokenTile) + ",early=1");
    // (With k-major scales there since planner v61: 56 k-tiles per block.)
    EXPECT_EQ(PlannedText(spec, 8192, 28672, 2),
              absl::StrReplaceAll(std::string(kSlices32TokenTile),
                                  {{",ksplit=", ",layout=kmajor,ksplit="}}) +
                  ",early=1");
    // 4096 x 14336 at 16 tokens: 8 splits of 7 k-tiles.
    EXPECT_EQ(PlannedText(spec, 4096, 14336, 1),
              std::string(kWide16TokenTile) + ",early=1");
    // A client of ABI 4 gets the same tiles without it.
    EXPECT_EQ(PlannedText(spec, 8192, 8192, 0, kLaunchAbiTokenTiles256),
              kKSplitTile);
    EXPECT_EQ(PlannedText(spec, 8192, 8192, 1, kLaunchAbiTokenTiles256),
              kSlices16TokenTile);
    // 4096 x 4096 at 16 tokens: the sixteen-warp tile, whose four k-tiles
    // fill its ring (planner v58, sweep ec2).
    EXPECT_EQ(PlannedText(spec, 4096, 4096, 1),
              std::string(kSixteenWarp16TokenTile) + ",early=1");
    // Where the same tiles lost: blocks of 28-32 k-tiles at 16 tokens
    // (fp16; bf16 takes it there with k-major scales since planner v67,
    // GemmDecodeEarlyTest.SixteenWarp64TokenAndBf16KMajor16TokenTiles), and
    // the 8x64x256 and 256-row tiles of the other layers.
    const bool bf16_activations =
        std::string(spec).find("act=bf16") != std::string::npos;
    for (const auto& [n, k] : {std::pair<int64_t, int64_t>{28672, 8192},
                               {8192, 28672},
                               {4096, 4096}}) {
      for (int range : {0, 1, 2, 3}) {
        if (n == 8192 && range == 2) continue;  // warpgroup k-slices, above
        if (n == 4096 && range == 1) continue;  // the sixteen-warp tile
        if (n != 4096 && range == 1 && bf16_activations) continue;
        EXPECT_EQ(PlannedText(spec, n, k, range).find("early="),
                  std::string::npos)
            << n << "x" << k << " range " << range;
      }
    }
    EXPECT_EQ(PlannedText(spec, 4096, 14336, 0).find("early="),
              std::string::npos);
  }
  // 6144 x 4096 bf16 plans the k-split tile over blocks of 4 k-tiles,
  // which lost.
  const char* bf16 = "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16";
  EXPECT_EQ(PlannedText(bf16, 6144, 4096, 0), kKSplitTile);
  // 8-bit weights: every tile tied or lost, but the two-warpgroup k-slices
  // at 16 and 32 tokens (planners v64 / v65, sweep et: without early=1
  // 1.02-1.03x).
  for (const char* spec : {"weight=uint8,group=128,scale=fp16",
                           "weight=e4m3,group=128,scale=fp16"}) {
    for (int range : {0, 3}) {
      EXPECT_EQ(PlannedText(spec, 8192, 8192, range).find("early="),
                std::string::npos)
          << spec << " range " << range;
    }
    EXPECT_EQ(PlannedText(spec, 8192, 8192, 1),
              "tile=16x64x256,warps=1x8,stages=6,mma=wgmma,ksplit=2,blocks=1,"
              "early=1")
        << spec;
    EXPECT_EQ(PlannedText(spec, 8192, 8192, 2),
              "tile=32x64x256,warps=1x8,stages=6,mma=wgmma,ksplit=2,blocks=1,"
              "early=1")
        << spec;
  }
  // The edges of 7-8 k-tiles per block (fp16, uint4): 8192 x 7168 holds 7
  // in both tiles; 8192 x 6144 holds 6 and 7680 x 9216 9; 6144 x 11008's 43
  // k-tiles in 5 splits give blocks of 8 and of 9. (Since planner v62 the
  // planner gives 8192 x 7168 / 6144 warpgroup k-slices at 16 tokens, so
  // there the 16-token tile's rule is asked directly: 4 splits of 7 and 6.)
  const char* fp16 = "weight=uint4,group=128,scale=fp16";
  EXPECT_EQ(PlannedText(fp16, 8192, 7168, 0),
            std::string(kKSplitTile) + ",early=1");
  EXPECT_EQ(PlannedText(fp16, 8192, 7168, 1),
            std::string(kSlices16TokenTile) + ",early=1");
  const absl::StatusOr<QuantSpec> fp16_spec = ParseSpecText(fp16);
  ASSERT_TRUE(fp16_spec.ok()) << fp16_spec.status();
  const GemmTileConfig wide_16 = *ParseGemmTileText(kWide16TokenTile);
  EXPECT_EQ(
      EarlyFirstTileFrom(wide_16, 4, Canonicalize(*fp16_spec), {8192, 7168}, 9),
      std::optional<int64_t>(9));
  EXPECT_EQ(
      EarlyFirstTileFrom(wide_16, 4, Canonicalize(*fp16_spec), {8192, 6144}, 9),
      std::nullopt);
  EXPECT_EQ(PlannedText(fp16, 8192, 6144, 0), kKSplitTile);
  EXPECT_EQ(PlannedText(fp16, 7680, 9216, 1), kWide16TokenTile);
  // (8192 x 9216 takes warpgroup k-slices since planner v57.)
  EXPECT_EQ(PlannedText(fp16, 8192, 9216, 1),
            std::string(kSlices16TokenTile) + ",early=1");
  EXPECT_EQ(PlannedText(fp16, 6144, 11008, 1), kWide16TokenTile);
  // 3-bit weights plan both tiles on 8192 x 8192 and were not measured.
  for (int range : {0, 1}) {
    EXPECT_EQ(
        PlannedText("weight=uint3,group=128,scale=fp16", 8192, 8192, range)
            .find("early="),
        std::string::npos)
        << range;
  }
  // 32 and 64 tokens take it only on warpgroup k-slices (above).
  EXPECT_EQ(PlannedText("weight=uint4,group=128,scale=fp16", 28672, 8192, 2)
                .find("early="),
            std::string::npos);
  EXPECT_EQ(PlannedText("weight=uint4,group=128,scale=fp16", 8192, 8192, 3)
                .find("early="),
            std::string::npos);
}

// Planner v58 (sweep ec2, bench/decode-notes.md v106): the 16-token
// sixteen-warp tile takes early=1 over the whole range wherever its ring
// holds every k-tile of its block (the kernel then copies all of K in the
// prologue, WgmmaConfig::kWholeKInRing), whatever the activation type; not
// over longer blocks, nor on the other 16-token k-split tiles.
TEST(GemmDecodeEarlyTest, SixteenWarpTileTakesItWhereItsRingHoldsAllOfK) {
  absl::StatusOr<GemmTileConfig> sixteen_warps =
      ParseGemmTileText(kSixteenWarp16TokenTile);
  ASSERT_TRUE(sixteen_warps.ok()) << sixteen_warps.status();
  for (const char* text : {"weight=uint4,group=128,scale=fp16",
                           "weight=uint4,group=128,scale=bf16,act=bf16,"
                           "out=bf16"}) {
    SCOPED_TRACE(text);
    absl::StatusOr<QuantSpec> spec = ParseSpecText(text);
    ASSERT_TRUE(spec.ok()) << spec.status();
    // Three and four k-tiles in four stages: from the range's first M.
    EXPECT_EQ(EarlyFirstTileFrom(*sixteen_warps, 1, *spec, {4096, 4096}, 9),
              std::optional<int64_t>(9));
    EXPECT_EQ(EarlyFirstTileFrom(*sixteen_warps, 1, *spec, {4096, 3072}, 9),
              std::optional<int64_t>(9));
    // Five (never planned: the v24 rule stops at K = 4096), or four in a
    // three-stage ring: no.
    EXPECT_EQ(EarlyFirstTileFrom(*sixteen_warps, 1, *spec, {4096, 5120}, 9),
              std::nullopt);
    GemmTileConfig three_stages = *sixteen_warps;
    three_stages.stages = 3;
    EXPECT_EQ(EarlyFirstTileFrom(three_stages, 1, *spec, {4096, 4096}, 9),
              std::nullopt);
    // The other 16-token k-split tile, even over blocks its ring holds: no.
    absl::StatusOr<GemmTileConfig> sixteen_rows = ParseGemmTileText(
        "tile=16x16x512,warps=1x8,stages=4,mma=wgmma,ksplit=8");
    ASSERT_TRUE(sixteen_rows.ok()) << sixteen_rows.status();
    EXPECT_EQ(EarlyFirstTileFrom(*sixteen_rows, 1, *spec, {4096, 2048}, 9),
              std::nullopt);
  }
  // The three-stage form for 8-bit weights on long K (planner v59): over
  // its 14 k-tiles; not with 4-bit weights.
  absl::StatusOr<GemmTileConfig> three_stages = ParseGemmTileText(
      "tile=16x32x1024,warps=1x16,stages=3,mma=wgmma,"
      "ksplit=8,blocks=1");
  ASSERT_TRUE(three_stages.ok()) << three_stages.status();
  absl::StatusOr<QuantSpec> uint8 =
      ParseSpecText("weight=uint8,group=128,scale=fp16");
  ASSERT_TRUE(uint8.ok()) << uint8.status();
  EXPECT_EQ(EarlyFirstTileFrom(*three_stages, 1, *uint8, {4096, 14336}, 9),
            std::optional<int64_t>(9));
  absl::StatusOr<QuantSpec> uint4 =
      ParseSpecText("weight=uint4,group=128,scale=fp16");
  ASSERT_TRUE(uint4.ok()) << uint4.status();
  EXPECT_EQ(EarlyFirstTileFrom(*three_stages, 1, *uint4, {4096, 14336}, 9),
            std::nullopt);
  for (const char* spec : {"weight=uint8,group=128,scale=fp16",
                           "weight=e4m3,group=128,scale=fp16,act=fp16,"
                           "out=fp16"}) {
    EXPECT_EQ(PlannedText(spec, 4096, 14336, 1),
              "tile=16x32x1024,warps=1x16,stages=3,mma=wgmma,ksplit=8,"
              "blocks=1,early=1")
        << spec;
  }
  // Planned so on 4096 x 3072 too, and never for a client before early=N.
  EXPECT_EQ(PlannedText("weight=uint4,group=128,scale=fp16", 4096, 3072, 1),
            std::string(kSixteenWarp16TokenTile) + ",early=1");
  EXPECT_EQ(PlannedText("weight=uint4,group=128,scale=fp16", 4096, 4096, 1,
                        kLaunchAbiTokenTiles256),
            kSixteenWarp16TokenTile);
}

// Planners v67 / v68 (sweeps ew, ex and ez, bench/decode-notes.md v113,
// v115): the
// sixteen-warp pre-scaled 64-token tile takes early=1 over splits of 56
// k-tiles or more for every spec it is planned for (uint8 / e4m3 with fp16
// activations, uint8 with bf16: 0.991-1.001x), and the 16-token 128-row
// tile with k-major scales over splits of 28-32 takes it with bf16
// activations (0.992-1.000x) but not with fp16 (1.007-1.013x).
TEST(GemmDecodeEarlyTest, SixteenWarp64TokenAndBf16KMajor16TokenTiles) {
  constexpr char kSixteenWarp64TokenTile[] =
      "tile=64x256x128,warps=1x16,stages=4,mma=wgmma,scales=pre";
  constexpr char kBf16W4[] =
      "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16";
  for (const auto& [n, k] :
       {std::pair<int64_t, int64_t>{28672, 8192}, {8192, 28672}}) {
    SCOPED_TRACE(::testing::Message() << n << "x" << k);
    for (const char* spec :
         {"weight=uint8,group=128,scale=fp16",
          "weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16",
          "weight=uint8,group=128,scale=bf16,act=bf16,out=bf16"}) {
      // The whole 33-64 token range, one entry.
      for (int64_t m : {33, 64}) {
        EXPECT_EQ(TextAtM(spec, n, k, m),
                  std::string(kSixteenWarp64TokenTile) + ",early=1")
            << spec << " M = " << m;
      }
    }
    for (int64_t m : {9, 16}) {
      EXPECT_EQ(TextAtM(kBf16W4, n, k, m),
                "tile=16x128x256,warps=1x8,stages=4,mma=wgmma,layout=kmajor,"
                "early=1")
          << "M = " << m;
    }
    // A client before early=N: the same tiles without it.
    EXPECT_EQ(PlannedText("weight=uint8,group=128,scale=fp16", n, k, 3,
                          kLaunchAbiTokenTiles256),
              kSixteenWarp64TokenTile);
    EXPECT_EQ(PlannedText(kBf16W4, n, k, 1, kLaunchAbiTokenTiles256),
              "tile=16x128x256,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
  }
  // Splits of 32 k-tiles (12288 x 8192 in two), which the sixteen-warp tile
  // takes, tied with it (planner v68, sweep ez): no option.
  EXPECT_EQ(TextAtM("weight=uint8,group=128,scale=fp16", 12288, 8192, 64),
            kSixteenWarp64TokenTile);
  // Each of the sixteen-warp tile's traits, changed alone, leaves the rule
  // (on 28672 x 8192 unsplit, 64 k-tiles: no other rule's reach).
  absl::StatusOr<QuantSpec> uint8 =
      ParseSpecText("weight=uint8,group=128,scale=fp16");
  ASSERT_TRUE(uint8.ok()) << uint8.status();
  absl::StatusOr<GemmTileConfig> sixteen_warps =
      ParseGemmTileText(kSixteenWarp64TokenTile);
  ASSERT_TRUE(sixteen_warps.ok()) << sixteen_warps.status();
  const LayerShape wide_layer{28672, 8192};
  EXPECT_EQ(EarlyFirstTileFrom(*sixteen_warps, 1, *uint8, wide_layer, 33),
            std::optional<int64_t>(33));
  // The measured splits' edge: 56 k-tiles (28672 x 7168 unsplit, 8192 x
  // 28672 in 4) take it; 55 (28672 x 7040) and 44-45 (8192 x 28672 in 5)
  // do not.
  EXPECT_EQ(EarlyFirstTileFrom(*sixteen_warps, 1, *uint8, {28672, 7168}, 33),
            std::optional<int64_t>(33));
  EXPECT_EQ(EarlyFirstTileFrom(*sixteen_warps, 4, *uint8, {8192, 28672}, 33),
            std::optional<int64_t>(33));
  EXPECT_EQ(EarlyFirstTileFrom(*sixteen_warps, 1, *uint8, {28672, 7040}, 33),
            std::nullopt);
  EXPECT_EQ(EarlyFirstTileFrom(*sixteen_warps, 5, *uint8, {8192, 28672}, 33),
            std::nullopt);
  std::vector<GemmTileConfig> others(9, *sixteen_warps);
  others[0].block_m = 32;
  others[1].block_n = 128;
  others[2].block_k = 64;
  others[3].warps_n = 8;
  others[4].warp_split_k = 2;
  others[5].stages = 5;
  others[6].prescaled_scales = false;
  others[7].warps_m = 2;
  others[8].mma = GemmMma::kSync;
  for (size_t i = 0; i < others.size(); ++i) {
    EXPECT_EQ(EarlyFirstTileFrom(others[i], 1, *uint8, wide_layer, 33),
              std::nullopt)
        << "variant " << i << ": " << FormatGemmTileText(others[i]);
  }
  // The 16-token tile over 32 k-tiles: only k-major scales with bf16
  // activations (v38's rule reaches blocks of 7-8 k-tiles only).
  absl::StatusOr<QuantSpec> bf16 = ParseSpecText(kBf16W4);
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  absl::StatusOr<QuantSpec> fp16 =
      ParseSpecText("weight=uint4,group=128,scale=fp16");
  ASSERT_TRUE(fp16.ok()) << fp16.status();
  absl::StatusOr<GemmTileConfig> k_major =
      ParseGemmTileText(std::string(kWide16TokenTile) + ",layout=kmajor");
  ASSERT_TRUE(k_major.ok()) << k_major.status();
  EXPECT_EQ(EarlyFirstTileFrom(*k_major, 1, *bf16, wide_layer, 9),
            std::optional<int64_t>(9));
  EXPECT_EQ(EarlyFirstTileFrom(*k_major, 1, *fp16, wide_layer, 9),
            std::nullopt);
  // Splits of 28-32 k-tiles: 28 (8192 x 28672 in 4) and 32 take it; 27
  // (28672 x 6912) and 33 (28672 x 8448) do not.
  EXPECT_EQ(EarlyFirstTileFrom(*k_major, 4, *bf16, {8192, 28672}, 9),
            std::optional<int64_t>(9));
  EXPECT_EQ(EarlyFirstTileFrom(*k_major, 1, *bf16, {28672, 6912}, 9),
            std::nullopt);
  EXPECT_EQ(EarlyFirstTileFrom(*k_major, 1, *bf16, {28672, 8448}, 9),
            std::nullopt);
  GemmTileConfig by_rows = *k_major;
  by_rows.k_major_scales = false;
  EXPECT_EQ(EarlyFirstTileFrom(by_rows, 1, *bf16, wide_layer, 9), std::nullopt);
  std::vector<GemmTileConfig> wide_others(4, *k_major);
  wide_others[0].block_m = 32;
  wide_others[1].block_n = 64;
  wide_others[2].block_k = 128;
  wide_others[3].warp_split_k = 2;
  for (size_t i = 0; i < wide_others.size(); ++i) {
    EXPECT_EQ(EarlyFirstTileFrom(wide_others[i], 1, *bf16, wide_layer, 9),
              std::nullopt)
        << "variant " << i << ": " << FormatGemmTileText(wide_others[i]);
  }
}

// Planner v40 (sweep cg, bench/results/tile-sweep-cg.md): the 8-token
// three-stage k-split tiles over blocks of at most 4 k-tiles take early=1
// from M = 6, the range planned as two entries of one tile; over blocks of
// 2 with 8-bit weights, the whole range; the 64-token pre-scaled tile over
// splits of 8-16 k-tiles, the whole range. Only with fp16
// activations, and only for clients of kLaunchAbiEarlyTiles.
TEST(GemmDecodeEarlyTest, V40RulesSplitTheEightTokenRangeWhereMeasured) {
  constexpr char kW4[] = "weight=uint4,group=128,scale=fp16";
  constexpr char kU8[] = "weight=uint8,group=128,scale=fp16";
  constexpr char kE4[] = "weight=e4m3,group=128,scale=fp16";
  constexpr char kW8KSplit[] =
      "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8";
  constexpr char kPrescaled64[] =
      "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre";
  constexpr char kPrescaledHalf64[] =
      "tile=64x64x128,warps=1x4,stages=4,mma=wgmma,scales=pre";
  const std::string w8_early = std::string(kW8KSplit) + ",early=1";
  const std::string w4_early = std::string(kKSplitTile) + ",early=1";
  // Blocks of 4 k-tiles (K = 4096, and 3072 for the 4-bit tile): M = 1-5
  // without, 6-8 with, as two entries.
  struct Split {
    const char* spec;
    int64_t n, k;
    const char* tile;
  };
  for (const Split& c :
       {Split{kU8, 4096, 4096, kW8KSplit}, Split{kE4, 4096, 4096, kW8KSplit},
        Split{kU8, 3072, 4096, kW8KSplit}, Split{kW4, 6144, 4096, kKSplitTile},
        Split{kW4, 6144, 3072, kKSplitTile},
        Split{kW4, 6144, 2048, kKSplitTile}}) {
    SCOPED_TRACE(::testing::Message() << c.spec << " " << c.n << "x" << c.k);
    const Plan plan = PlanOf(c.spec, c.n, c.k);
    ASSERT_GE(plan.entries.size(), 5u);
    EXPECT_EQ(plan.entries[0].m_min, 1);
    EXPECT_EQ(plan.entries[0].m_max, 5);
    EXPECT_EQ(plan.entries[0].config.text, c.tile);
    EXPECT_EQ(plan.entries[1].m_min, 6);
    EXPECT_EQ(plan.entries[1].m_max, 8);
    EXPECT_EQ(plan.entries[1].config.text, std::string(c.tile) + ",early=1");
    EXPECT_EQ(plan.entries[1].launch.grid_y, plan.entries[0].launch.grid_y);
    EXPECT_EQ(plan.entries[1].launch.grid_z, 1);
    EXPECT_EQ(plan.entries[2].m_min, 9);
    // An ABI 4 client: one entry, no option.
    const Plan old = PlanOf(c.spec, c.n, c.k, kLaunchAbiTokenTiles256);
    ASSERT_FALSE(old.entries.empty());
    EXPECT_EQ(old.entries[0].m_max, 8);
    EXPECT_EQ(old.entries[0].config.text, c.tile);
  }
  // 8-bit weights over blocks of 2 k-tiles: the whole range.
  const Plan two = PlanOf(kU8, 4096, 2048);
  ASSERT_FALSE(two.entries.empty());
  EXPECT_EQ(two.entries[0].m_max, 8);
  EXPECT_EQ(two.entries[0].config.text, w8_early);
  // The tile each layer plans at M tokens, by the rules' edges.
  const char* bf16_w4 = "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16";
  const char* bf16_w8 = "weight=uint8,group=128,scale=bf16,act=bf16,out=bf16";
  const std::string pre_early = std::string(kPrescaled64) + ",early=1";
  struct AtM {
    const char* spec;
    int64_t n, k, m;
    std::string text;
  };
  std::vector<AtM> cases = {
      // Blocks of 1 (4096 x 1024) keep the tile without it; blocks of 3
      // (4096 x 3072, unmeasured) take the rule of 4.
      {kU8, 4096, 1024, 8, kW8KSplit},
      {kU8, 4096, 3072, 5, kW8KSplit},
      {kU8, 4096, 3072, 6, w8_early},
      // Blocks of 5 (K = 5120) and of 14 (4096 x 14336): no option.
      {kU8, 4096, 5120, 8, kW8KSplit},
      {kU8, 4096, 14336, 8, kW8KSplit},
      {kE4, 4096, 14336, 8, kW8KSplit},
      // bf16 activations: neither the measured loser (4-bit, 6144 x 4096)
      // nor the unmeasured 8-bit tiles take it; nor 4-bit weights on the
      // four-stage k-split tile.
      {bf16_w4, 6144, 4096, 8, kKSplitTile},
      {bf16_w8, 4096, 4096, 8, kW8KSplit},
      {bf16_w8, 4096, 4096, 64, kPrescaled64},
      {kW4, 4096, 4096, 8,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8"},
  };
  // The 64-token pre-scaled tile: splits of 12-13 (6144 x 4096 in 5) and 16
  // (4096 x 8192 in 8) take it; 26 (6144 x 8192 in 5), 28 (4096 x 14336 in
  // 8) and 20 (4096 x 10240 in 8) do not; splits of at most 8 (4096 x 4096
  // in 8, 4096 x 3072 in 8, 4096 x 1024 in 4) run its pre-scaled 64-row half
  // in half the splits since planner v51 (ShortSplitPrescaledHalfTile),
  // without the option.
  for (const char* spec : {kU8, kE4}) {
    for (const AtM& c :
         std::initializer_list<AtM>{{spec, 4096, 4096, 33, kPrescaledHalf64},
                                    {spec, 4096, 4096, 64, kPrescaledHalf64},
                                    {spec, 6144, 4096, 64, pre_early},
                                    {spec, 4096, 8192, 64, pre_early},
                                    {spec, 4096, 14336, 64, kPrescaled64},
                                    {spec, 6144, 8192, 64, kPrescaled64},
                                    {spec, 4096, 3072, 64, kPrescaledHalf64},
                                    {spec, 4096, 10240, 64, kPrescaled64},
                                    {spec, 4096, 1024, 64, kPrescaledHalf64}}) {
      cases.push_back(c);
    }
  }
  for (const AtM& c : cases) {
    EXPECT_EQ(TextAtM(c.spec, c.n, c.k, c.m), c.text)
        << c.spec << " " << c.n << "x" << c.k << " M = " << c.m;
  }
  for (const char* spec : {kU8, kE4}) {
    EXPECT_EQ(TextAtM(spec, 6144, 4096, 64, kLaunchAbiTokenTiles256),
              kPrescaled64);
  }
}

}  // namespace
}  // namespace hummingd
