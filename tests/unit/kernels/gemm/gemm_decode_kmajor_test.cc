// Hopper's decode plan (kernels/gemm_decode_plan.h) and k-major scales: the
// wide tiles of specs with one scale per row take them, only for clients
// whose launch ABI passes the transposed scales, and the plan key records
// the request's ABI.

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "kernels/gemm_config.h"
#include "kernels/gemm_decode_plan.h"
#include "kernels/gemm_decode_tile_options.h"
#include "kernels/launch_abi.h"
#include "kernels/layer_shape.h"
#include "kernels/plan.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

using testing::DecodeRangeTops;
using testing::DecodeRequest;
using testing::kIssue5Layers;
using testing::kIssue5SpecsWithGroupSizes;

TEST(GemmDecodePlanTest, KMajorScalesOnWideTilesOfSpecsWithOneScalePerRow) {
  auto tiles = [](const char* spec, int64_t n, int64_t k) {
    std::vector<GemmTileConfig> out;
    absl::StatusOr<Plan> plan = PlanKernels(DecodeRequest(spec, n, k));
    EXPECT_TRUE(plan.ok()) << spec << ": " << plan.status();
    if (!plan.ok()) return out;
    const std::vector<PlanEntry> tops = DecodeRangeTops(*plan);
    EXPECT_EQ(tops.size(), 4u);
    for (const PlanEntry& entry : tops) {
      absl::StatusOr<GemmTileConfig> tile =
          ParseGemmTileText(entry.config.text);
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
    // bf16 on splits of 28-32 k-tiles: fp16's 128-row tiles at 16 tokens
    // since planner v53 (sweep dk) and at 8 since v54 (sweep dl); with
    // channel-wise scales (8 k-tiles per split at most) the 256-row k-major
    // tile at both.
    const std::vector<GemmTileConfig> bf16 = tiles(kW4Bf16, n, k);
    ASSERT_EQ(bf16.size(), 4u);
    const std::vector<GemmTileConfig> bf16_channel =
        tiles("weight=uint4,group=channel,scale=bf16,act=bf16,out=bf16", n, k);
    ASSERT_EQ(bf16_channel.size(), 4u);
    // Since planner v61 the 16-token one (256-column k-tiles, 28-32 per
    // split) reads k-major scales too; the 8-token one does not. Since
    // planner v72 channel-wise scales at 16 tokens on 8192 x 28672 (a wave
    // of 64-row blocks) run the warpgroup k-slices instead.
    for (int i : {0, 1}) {
      EXPECT_EQ(bf16[i].block_n, 128);
      EXPECT_EQ(bf16[i].k_major_scales, i == 1);
      const bool slices = i == 1 && n == 8192;
      EXPECT_EQ(bf16_channel[i].block_n, slices ? 64 : 256);
      EXPECT_EQ(bf16_channel[i].k_major_scales, !slices);
    }
    // fp16: 128 rows since planner v16 (8 tokens) and v18 (16), k-major at
    // 16 since v61.
    const std::vector<GemmTileConfig> fp16 = tiles(kW4, n, k);
    ASSERT_EQ(fp16.size(), 4u);
    for (int i : {0, 1}) {
      EXPECT_EQ(fp16[i].block_n, 128);
      EXPECT_EQ(fp16[i].k_major_scales, i == 1);
    }
    EXPECT_EQ(fp16[1].block_k, 256);
  }
  {
    const std::vector<GemmTileConfig> planned = tiles(kW4, 8192, 8192);
    ASSERT_EQ(planned.size(), 4u);
    EXPECT_EQ(FormatGemmTileText(planned[0]),
              "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4,early=1");
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
    for (auto [n, k] : kIssue5Layers) {
      SCOPED_TRACE(::testing::Message() << spec << " N=" << n << " K=" << k);
      for (const GemmTileConfig& tile : tiles(spec, n, k)) {
        EXPECT_FALSE(tile.k_major_scales) << FormatGemmTileText(tile);
        wide += tile.block_n == 256;
      }
    }
    EXPECT_GT(wide, 0) << spec;
  }
}

// Planner v61 (sweeps el, em): k-major scales beyond the 256-row tiles, on
// the 128-row 256-column tiles at 16 and 32 tokens whose splits hold 28 or
// more k-tiles and the 32-token warpgroup k-slices over 16 or more, one
// wave of blocks, uint4 in groups of 128.
TEST(KMajorScalesOnLongSplitsTest, LongSplitsOfTheMeasuredTilesInGroupsOf128) {
  const char* const kW4 = "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16";
  const char* const kW4Bf16 =
      "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16";
  struct Case {
    const char* spec;
    const char* tile;
    int64_t n, k, splits;
    int sm_count;
    bool k_major;
  };
  const char* const k16 = "tile=16x128x256,warps=1x8,stages=4,mma=wgmma";
  const char* const k32 = "tile=32x128x256,warps=1x8,stages=3,mma=wgmma";
  const char* const slices32 =
      "tile=32x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,early=1";
  const Case cases[] = {
      // 28672 x 8192 unsplit (32 k-tiles), 8192 x 28672 in 4 splits (28).
      {kW4, k16, 28672, 8192, 1, 132, true},
      {kW4Bf16, k16, 28672, 8192, 1, 132, true},
      {kW4, k32, 28672, 8192, 1, 132, true},
      {kW4, k16, 8192, 28672, 4, 132, true},
      // Splits of 28 and 27 k-tiles (one wave: 128 blocks); 8 tokens;
      // 128-column k-tiles.
      {kW4, k16, 8192, 14336, 2, 132, true},
      {kW4, k16, 8192, 13824, 2, 132, false},
      {kW4, "tile=8x128x256,warps=1x8,stages=4,mma=wgmma", 28672, 8192, 1, 132,
       false},
      {kW4, "tile=16x128x128,warps=1x8,stages=4,mma=wgmma", 28672, 8192, 1, 132,
       false},
      // One wave: 264 blocks two per SM on 132 SMs, not 448, nor 224 on 100.
      {kW4, k16, 264 * 128, 8192, 1, 132, true},
      {kW4, k16, 57344, 8192, 1, 132, false},
      {kW4, k16, 28672, 8192, 1, 100, false},
      // The 32-token slices over 16 (8192 x 8192) or 56 k-tiles, not 8
      // (6144 x 4096); the 16-token ones lost.
      {kW4, slices32, 8192, 8192, 1, 132, true},
      {kW4Bf16, slices32, 8192, 28672, 1, 132, true},
      {kW4, slices32, 6144, 4096, 1, 132, false},
      {kW4,
       "tile=16x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,early=1",
       8192, 8192, 1, 132, false},
      // Over 15 k-tiles (8192 x 7680) the slices keep row-major scales.
      {kW4, slices32, 8192, 7680, 1, 132, false},
      // Only uint4 in groups of 128, scales of the activations' type.
      {"weight=uint4,group=128,scale=bf16,act=fp16,out=fp16", k16, 28672, 8192,
       1, 132, false},
      {"weight=uint4,group=128,scale=fp16,zero=int,act=fp16,out=fp16", k16,
       28672, 8192, 1, 132, false},
      {"weight=uint4,group=64,scale=fp16,act=fp16,out=fp16", k16, 28672, 8192,
       1, 132, false},
      {"weight=uint4,group=channel,scale=fp16,act=fp16,out=fp16", k16, 28672,
       8192, 1, 132, false},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", k16, 28672, 8192,
       1, 132, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.spec << " " << c.tile << " N=" << c.n << " K=" << c.k
                 << " splits=" << c.splits << " SMs=" << c.sm_count);
    absl::StatusOr<QuantSpec> spec = ParseSpecText(c.spec);
    ASSERT_TRUE(spec.ok()) << spec.status();
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(c.tile);
    ASSERT_TRUE(tile.ok()) << tile.status();
    LayerShape shape;
    shape.n = c.n;
    shape.k = c.k;
    EXPECT_EQ(KMajorScalesOnLongSplitsWin(*tile, c.splits, Canonicalize(*spec),
                                          shape, c.sm_count),
              c.k_major);
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
  // bf16 with channel-wise scales keeps the 256-row tiles at 8 and 16
  // tokens on 28672 x 8192.
  const char* const kW4Bf16Channel =
      "weight=uint4,group=channel,scale=bf16,act=bf16,out=bf16";
  const Plan original =
      plan_for(kW4Bf16Channel, 28672, 8192, kLaunchAbiOriginal);
  const Plan current =
      plan_for(kW4Bf16Channel, 28672, 8192, kLaunchAbiKMajorScales);
  ASSERT_EQ(original.entries.size(), current.entries.size());
  ASSERT_GE(current.entries.size(), 4u);
  EXPECT_EQ(current.entries[0].config.text,
            "tile=8x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
  EXPECT_EQ(original.entries[0].config.text,
            "tile=8x256x128,warps=1x8,stages=4,mma=wgmma");
  EXPECT_EQ(current.entries[1].config.text,
            "tile=16x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
  EXPECT_EQ(original.entries[1].config.text,
            "tile=16x256x128,warps=1x8,stages=4,mma=wgmma");
  // In groups of 128 bf16 takes 128-row tiles at 8 and 16 tokens since
  // planners v53 / v54, and fp16 since v16 / v18: the same for ABI 0 and
  // ABI 1 (the first that takes k-major scales) but for the 16-token
  // tile's k-major scales (planner v61).
  for (const char* spec :
       {kW4, "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16"}) {
    const Plan abi0 = plan_for(spec, 28672, 8192, kLaunchAbiOriginal);
    const Plan abi1 = plan_for(spec, 28672, 8192, kLaunchAbiKMajorScales);
    ASSERT_GE(abi0.entries.size(), 2u);
    ASSERT_EQ(abi0.entries.size(), abi1.entries.size());
    for (int i : {0, 1}) {
      EXPECT_EQ(abi1.entries[i].config.text.find("x256x128"), std::string::npos)
          << abi1.entries[i].config.text;
      EXPECT_EQ(abi1.entries[i].config.text.find(",layout=kmajor") !=
                    std::string::npos,
                i == 1)
          << abi1.entries[i].config.text;
      // The same kernel otherwise: text, threads and shared memory.
      KernelConfig row_major = abi1.entries[i].config;
      row_major.text =
          absl::StrReplaceAll(row_major.text, {{",layout=kmajor", ""}});
      EXPECT_EQ(abi0.entries[i].config, row_major);
    }
  }

  // Every decode layer and spec: nothing k-major for ABI 0, and the same
  // plan as ABI 1's once its k-major option is taken off.
  int k_major_current = 0;
  std::vector<const char*> specs = kIssue5SpecsWithGroupSizes;
  specs.push_back(kW4Bf16Channel);
  for (const char* spec : specs) {
    for (auto [n, k] : kIssue5Layers) {
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
  // The 256-row tiles of fp16 groups of 32 and of bf16 channel-wise scales
  // on the two long-split layers at 8 and 16 tokens (bf16 in groups of 128
  // had them at 8 before planner v54, at 16 before v53), and since planner
  // v61 the 128-row 256-column tiles of groups of 128 (fp16, bf16) on the
  // same layers at 16 and 32 tokens (an ABI-1 client has no k-split tiles,
  // so its 32-token tile on 8192 x 28672 is one too).
  EXPECT_EQ(k_major_current, 16);
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
    for (const char* spec : kIssue5SpecsWithGroupSizes) {
      for (auto [n, k] : kIssue5Layers) {
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

}  // namespace
}  // namespace hummingd
