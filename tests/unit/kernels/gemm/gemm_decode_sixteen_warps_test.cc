// Planner v49 (kernels/gemm_decode_sixteen_warps.h, bench/decode-notes.md
// v91) and v50 (bf16 too): 8-bit weights at 64 tokens in splits of at
// least 32 k-tiles, one grid wave, take one 256-row sixteen-warp block per
// SM; short splits, more than a wave, 4-bit weights, fine scales and other
// tiles keep what they had.

#include "kernels/gemm_decode_sixteen_warps.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "kernels/gemm_config.h"
#include "kernels/planner.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

using testing::DecodeRangeEntry;
using testing::GemmRequest;
using testing::SpecOf;
using testing::TileOf;

constexpr char kUint8[] = "weight=uint8,group=128,scale=fp16";
constexpr char kE4m3[] = "weight=e4m3,group=128,scale=fp16";
constexpr char kSixteenWarps[] =
    "tile=64x256x128,warps=1x16,stages=4,mma=wgmma,scales=pre";
// As planned since planner v67 (GemmDecodeEarlyTest covers the option).
constexpr char kSixteenWarpsEarly[] =
    "tile=64x256x128,warps=1x16,stages=4,mma=wgmma,scales=pre,early=1";
constexpr char kTwoPerSm[] =
    "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre";
constexpr int kSmemLimit = 227 * 1024;
constexpr int kSms = 132;

// The plan's text and splits for the 64-token range.
std::pair<std::string, int64_t> Planned64(const char* spec, int64_t n,
                                          int64_t k) {
  absl::StatusOr<Plan> plan =
      PlanKernels(GemmRequest(spec, n, k, "sm_90a", kSms));
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {"", 0};
  const PlanEntry entry = DecodeRangeEntry(*plan, 3);
  return {entry.config.text, entry.launch.grid_z};
}

std::optional<SplitTile> Rule(const char* spec, int64_t n, int64_t k,
                              const char* tile = kTwoPerSm,
                              int smem_limit = kSmemLimit) {
  return SixteenWarpEightBitTile(TileOf(tile), SpecOf(spec), LayerShape{n, k},
                                 kSms, smem_limit);
}

TEST(GemmDecodeSixteenWarpsTest, PlannedWhereMeasured) {
  for (const char* spec : {kUint8, kE4m3}) {
    // 32 256-row blocks x 4 splits of 56 k-tiles; 112 blocks unsplit of 64.
    EXPECT_EQ(Planned64(spec, 8192, 28672),
              std::make_pair(std::string(kSixteenWarpsEarly), int64_t{4}))
        << spec;
    EXPECT_EQ(Planned64(spec, 28672, 8192),
              std::make_pair(std::string(kSixteenWarpsEarly), int64_t{1}))
        << spec;
    // Where it lost: 8192 x 8192 (4 splits of 16 k-tiles), 4096 x 14336.
    EXPECT_EQ(Planned64(spec, 8192, 8192).first, kTwoPerSm) << spec;
    EXPECT_EQ(Planned64(spec, 4096, 14336).first, kTwoPerSm) << spec;
  }
  // bf16 activations take it too (planner v50).
  constexpr char kUint8Bf16[] =
      "weight=uint8,group=128,scale=bf16,act=bf16,out=bf16";
  EXPECT_EQ(Planned64(kUint8Bf16, 8192, 28672),
            std::make_pair(std::string(kSixteenWarpsEarly), int64_t{4}));
  EXPECT_EQ(Planned64(kUint8Bf16, 28672, 8192),
            std::make_pair(std::string(kSixteenWarpsEarly), int64_t{1}));
  EXPECT_EQ(Planned64(kUint8Bf16, 8192, 8192).first, kTwoPerSm);
  // 4-bit weights keep their tile (it lost with them).
  EXPECT_EQ(Planned64("weight=uint4,group=128,scale=fp16", 8192, 28672),
            std::make_pair(
                std::string("tile=64x128x128,warps=1x8,stages=4,mma=wgmma"),
                int64_t{4}));
}

TEST(GemmDecodeSixteenWarpsTest, TheRuleHoldsAtItsEdges) {
  // N = 8192 splits in 4 (one wave of 128 blocks): 32 k-tiles per split at
  // K = 16384 take it, 31 at K = 15872 do not.
  std::optional<SplitTile> at_edge = Rule(kUint8, 8192, 16384);
  ASSERT_TRUE(at_edge.has_value());
  EXPECT_EQ(FormatGemmTileText(at_edge->tile), kSixteenWarps);
  EXPECT_EQ(at_edge->splits, 4);
  EXPECT_FALSE(Rule(kUint8, 8192, 15872));
  // One wave: 132 256-row blocks unsplit take it, 133 do not.
  EXPECT_TRUE(Rule(kUint8, 132 * 256, 8192));
  EXPECT_FALSE(Rule(kUint8, 133 * 256, 8192));
  // N must be a multiple of 256 (the tile's validation).
  EXPECT_FALSE(Rule(kUint8, 112 * 256 + 128, 8192));
  // 4-bit weights, fine scales.
  EXPECT_FALSE(Rule("weight=uint4,group=128,scale=fp16", 8192, 28672,
                    "tile=64x128x128,warps=1x8,stages=4,mma=wgmma,scales=pre"));
  EXPECT_FALSE(Rule("weight=uint8,group=32,scale=fp16", 8192, 28672));
  // Only the pre-scaled 64-token two-warpgroup tile gives way.
  EXPECT_FALSE(
      Rule(kUint8, 8192, 28672, "tile=64x128x64,warps=1x8,stages=6,mma=wgmma"));
  EXPECT_FALSE(Rule(kUint8, 8192, 28672,
                    "tile=32x128x128,warps=1x8,stages=4,mma=wgmma,scales=pre"));
  EXPECT_FALSE(Rule(kUint8, 8192, 28672,
                    "tile=64x64x64,warps=1x4,stages=6,mma=wgmma,scales=pre"));
  // A shared-memory limit its four stages do not fit.
  EXPECT_FALSE(Rule(kUint8, 8192, 28672, kTwoPerSm, 160 * 1024));
}

}  // namespace
}  // namespace hummingd
