// Hopper's decode plan (kernels/gemm_decode_plan.h), the tiles it runs
// several per SM: four- and three-per-SM tiles fit that many and their stubs
// say so, 256-column tiles on the small layers and the long splits of 16 KB
// tiles fill one wave, and layers wider than a wave run unsplit.

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/gemm_config.h"
#include "kernels/gemm_decode_plan.h"
#include "kernels/launch_abi.h"
#include "kernels/planner.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

using testing::DecodeRangeEntry;
using testing::DecodeRequest;

TEST(GemmDecodePlanTest, FourBlocksPerSmTilesFitFourAndTheStubSaysSo) {
  const char* const kW4 = "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16";
  // K not a multiple of 256 (where 256-column k-tiles cannot go; on 8192 x
  // 8192 and 4096 x 14336 they took over at planner v16).
  // 6144 x 4224 is the GPU suite's case for it.
  const std::pair<int64_t, int64_t> four_per_sm[] = {
      {8192, 7808}, {4096, 14208}, {6144, 4224}};
  for (auto [n, k] : four_per_sm) {
    SCOPED_TRACE(::testing::Message() << "N=" << n << " K=" << k);
    const KernelRequest request = DecodeRequest(kW4, n, k);
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const PlanEntry& entry = DecodeRangeEntry(*plan, 0);
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(entry.config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_EQ(WgmmaBlocksPerSm(*tile), 4);
    EXPECT_GE(Sm90ResidentBlocks(tile->Threads(), 1,
                                 entry.launch.dynamic_shared_memory),
              4);
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
    const KernelRequest request = DecodeRequest(kW4, 28672, 8192);
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    KernelConfig config = DecodeRangeEntry(*plan, 2).config;  // 32 tokens
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
  // (planner v34) where a client cannot load k-split tiles (the others take
  // k-split warps over 16-row blocks: fp16 since planner v55, below, bf16
  // since v56; fp16 with bulk weight copies since v43); its stub bounds 128
  // threads at four.
  for (const char* spec :
       {kW4, "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16"}) {
    SCOPED_TRACE(spec);
    const bool fp16 = std::string(spec) == kW4;
    const KernelRequest request = testing::GemmRequest(
        spec, 4096, 14336, "sm_90a", 132, kLaunchAbiKMajorScales);
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const PlanEntry& entry = DecodeRangeEntry(*plan, 0);
    EXPECT_EQ(entry.config.text,
              fp16 ? "tile=8x64x256,warps=1x4,stages=4,mma=wgmma,copy=bulk,"
                     "blocks=4"
                   : "tile=8x64x256,warps=1x4,stages=4,mma=wgmma,blocks=4");
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
  // fp16 past K = 8192 (planner v55): k-split warps over 16-row blocks of
  // three stages, two per SM, one unsplit block per 16 rows (256 on 4096
  // rows: one wave at two per SM), with long scale chunks beside the ring.
  {
    const KernelRequest request = DecodeRequest(kW4, 4096, 14336);
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const PlanEntry& entry = DecodeRangeEntry(*plan, 0);
    EXPECT_EQ(entry.config.text,
              "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8");
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(entry.config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_EQ(WgmmaBlocksPerSm(*tile), 2);
    EXPECT_LE(2 * (entry.launch.dynamic_shared_memory + 1024), 228 * 1024);
    EXPECT_EQ(entry.launch.grid_z, 1);
    EXPECT_EQ(entry.launch.grid_y * entry.launch.grid_z, 4096 / 16);
    EXPECT_TRUE(WgmmaLongScaleChunks(*tile, testing::SpecOf(kW4)));
  }
  // 6144 x 4096 moved to 256-column k-tiles three per SM (planner v13).
  const std::pair<int64_t, int64_t> kept[] = {
      {4096, 4096}, {6144, 4096}, {28672, 8192}, {8192, 28672}, {8192, 8192}};
  for (auto [n, k] : kept) {
    SCOPED_TRACE(::testing::Message() << "N=" << n << " K=" << k);
    absl::StatusOr<Plan> plan = PlanKernels(DecodeRequest(kW4, n, k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    absl::StatusOr<GemmTileConfig> tile =
        ParseGemmTileText(DecodeRangeEntry(*plan, 0).config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_NE(WgmmaBlocksPerSm(*tile), 4)
        << DecodeRangeEntry(*plan, 0).config.text;
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
       {"tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4,early=1", 1}},
  };
  for (const auto& [spec, expected] : fine) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Plan> plan = PlanKernels(DecodeRequest(spec, 8192, 8192));
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(DecodeRangeEntry(*plan, 0).config.text, expected.first);
    EXPECT_EQ(DecodeRangeEntry(*plan, 0).launch.grid_z, expected.second);
  }
  // 2-D block scales: by their K side (128 columns: the k-split warps of
  // coarse scales on 8192 x 8192 since v20; 32: neither). 6-bit weights keep
  // deferred
  // scales at 64 tokens (pre-scaling was measured with 8-bit weights only).
  for (const char* spec : {"weight=uint4,group=32x128,scale=fp16",
                           "weight=uint4,group=128x128,scale=fp16"}) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Plan> plan = PlanKernels(DecodeRequest(spec, 8192, 8192));
    ASSERT_TRUE(plan.ok()) << plan.status();
    absl::StatusOr<GemmTileConfig> tile =
        ParseGemmTileText(DecodeRangeEntry(*plan, 0).config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_NE(WgmmaBlocksPerSm(*tile), 4);
    const bool coarse =
        std::string(spec).find("group=128x128") != std::string::npos;
    if (coarse) {
      EXPECT_EQ(DecodeRangeEntry(*plan, 0).config.text,
                "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4,early=1");
    } else {
      EXPECT_LT(tile->block_k, 256) << DecodeRangeEntry(*plan, 0).config.text;
      EXPECT_EQ(tile->warp_split_k, 1)
          << DecodeRangeEntry(*plan, 0).config.text;
    }
  }
  absl::StatusOr<Plan> six_bit = PlanKernels(
      DecodeRequest("weight=uint6,group=128,scale=fp16", 8192, 8192));
  ASSERT_TRUE(six_bit.ok()) << six_bit.status();
  EXPECT_EQ(DecodeRangeEntry(*six_bit, 3).config.text.find("scales=pre"),
            std::string::npos)
      << DecodeRangeEntry(*six_bit, 3).config.text;
  absl::StatusOr<Plan> channel = PlanKernels(
      DecodeRequest("weight=uint4,group=channel,scale=fp16", 8192, 8192));
  ASSERT_TRUE(channel.ok()) << channel.status();
  EXPECT_EQ(DecodeRangeEntry(*channel, 0).config.text,
            "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4,early=1");
  // 8-bit weights at 8 tokens: 128-column k-tiles in long splits (planner
  // v18), with the launch bounds of four per SM (64 registers) that their
  // small-layer tile always had, though their shared memory lets two reside
  // (10240 x 8192: 8192 x 8192 takes k-split warps four per SM since v21).
  const KernelRequest w8_request = DecodeRequest(
      "weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 10240, 8192);
  absl::StatusOr<Plan> w8 = PlanKernels(w8_request);
  ASSERT_TRUE(w8.ok()) << w8.status();
  const PlanEntry& w8_entry = DecodeRangeEntry(*w8, 0);
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
// 14208, not multiples of 256, keep three per SM). 3584 x 6144 takes the
// 64-row half of that tile three per SM in half the splits (planner v46;
// 6144 x 4096, where it was measured, runs warpgroup k-slices at 16 tokens
// since planners v60 and, in groups of 32, v69).
TEST(GemmDecodePlanTest, ThreeBlocksPerSmTilesFitThreeAndTheStubSaysSo) {
  struct Layer {
    int64_t n, k, splits;
    const char* tile;
    const char* launch_bounds;
  };
  constexpr char kPacked[] =
      "tile=16x128x128,warps=1x8,stages=4,mma=wgmma,blocks=3";
  constexpr char kHalf[] =
      "tile=16x64x256,warps=1x4,stages=4,mma=wgmma,blocks=3";
  const Layer three_per_sm[] = {
      {8192, 7808, 6, kPacked, "__launch_bounds__(256, 3)"},
      {4096, 14208, 12, kPacked, "__launch_bounds__(256, 3)"},
      {3584, 6144, 6, kHalf, "__launch_bounds__(128, 3)"}};
  for (const char* spec :
       {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
        "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16"}) {
    for (const Layer& layer : three_per_sm) {
      SCOPED_TRACE(::testing::Message()
                   << spec << " N=" << layer.n << " K=" << layer.k);
      const KernelRequest request = DecodeRequest(spec, layer.n, layer.k);
      absl::StatusOr<Plan> plan = PlanKernels(request);
      ASSERT_TRUE(plan.ok()) << plan.status();
      const PlanEntry& entry = DecodeRangeEntry(*plan, 1);
      EXPECT_EQ(entry.config.text, layer.tile);
      EXPECT_EQ(entry.launch.grid_z, layer.splits);
      absl::StatusOr<GemmTileConfig> tile =
          ParseGemmTileText(entry.config.text);
      ASSERT_TRUE(tile.ok()) << tile.status();
      EXPECT_EQ(WgmmaBlocksPerSm(*tile), 3);
      EXPECT_GE(Sm90ResidentBlocks(tile->Threads(), 1,
                                   entry.launch.dynamic_shared_memory),
                3);
      EXPECT_GT(entry.launch.grid_y * entry.launch.grid_z, 2 * 132);
      EXPECT_LE(layer.k / tile->block_k, 12 * entry.launch.grid_z);
      absl::StatusOr<KernelSource> stub = GenerateStub(request, entry.config);
      ASSERT_TRUE(stub.ok()) << stub.status();
      EXPECT_NE(stub->source.find(layer.launch_bounds), std::string::npos);
    }
  }
  // 4096 x 4096: 8 splits are 256 blocks (no gain measured); 8192 x 28672:
  // 6 splits of 37 k-tiles (slower); 28672 x 8192: 224 blocks; groups of 16
  // and 8-bit weights were not measured three per SM; 8192 x 8192 and 4096 x
  // 14336 take 256-column k-tiles from 16 tokens (v18), groups of 32 and 64
  // too (v35).
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
        PlanKernels(DecodeRequest(spec, layer.first, layer.second));
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
    const KernelRequest request = DecodeRequest(c.spec, c.n, c.k);
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const PlanEntry& entry = DecodeRangeEntry(*plan, c.range);
    EXPECT_EQ(entry.config.text, c.tile);
    EXPECT_EQ(c.k / 256 / entry.launch.grid_z, 2);
    EXPECT_LE(entry.launch.grid_y * entry.launch.grid_z,
              int64_t{c.blocks_per_sm} * 132);
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(entry.config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_EQ(WgmmaBlocksPerSm(*tile), c.blocks_per_sm);
    EXPECT_GE(Sm90ResidentBlocks(tile->Threads(), 1,
                                 entry.launch.dynamic_shared_memory),
              c.blocks_per_sm);
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
  // tokens, and 6144 x 4096 warpgroup k-slices at 16, planner v60, and with
  // 8-bit weights at 32, planner v64: unsplit, on 256-column k-tiles too).
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
    absl::StatusOr<Plan> plan = PlanKernels(DecodeRequest(c.spec, c.n, c.k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (int i = 0; i < 4; ++i) {
      const std::string text = DecodeRangeEntry(*plan, i).config.text;
      const bool eight_bit_slices =
          i == 2 && text ==
                        "tile=32x64x256,warps=1x8,stages=6,mma=wgmma,ksplit=2,"
                        "blocks=1,early=1";
      EXPECT_TRUE(text.find("x256,") == std::string::npos || eight_bit_slices)
          << text;
    }
  }
  absl::StatusOr<Plan> w4_6144 = PlanKernels(DecodeRequest(
      "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 6144, 4096));
  ASSERT_TRUE(w4_6144.ok()) << w4_6144.status();
  // Its 16-token tile is not this rule's 128-row 256-column tile three per
  // SM (which lost there: 10.5 against 7.7 µs) but planner v60's warpgroup
  // k-slices (before it v46's 64-row half).
  EXPECT_EQ(DecodeRangeEntry(*w4_6144, 1).config.text,
            "tile=16x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,"
            "early=1");
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
    const PlanEntry& entry = DecodeRangeEntry(*plan, 0);
    const int blocks_per_sm = c.half_tile ? 4 : 2;
    // The half tile takes bulk weight copies with fp16 activations (planner
    // v43, BulkWeightsWin).
    const bool fp16 = std::string(c.spec).find("act=fp16") != std::string::npos;
    EXPECT_EQ(entry.config.text,
              !c.half_tile ? "tile=8x128x256,warps=1x8,stages=4,mma=wgmma"
              : fp16 ? "tile=8x64x256,warps=1x4,stages=4,mma=wgmma,copy=bulk,"
                       "blocks=4"
                     : "tile=8x64x256,warps=1x4,stages=4,mma=wgmma,blocks=4");
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
    // split), with k-major scales for uint4 in groups of 128 where the
    // splits hold 28 or more k-tiles (planner v61).
    const bool k_major =
        std::string(c.spec).find("uint4,group=128,") != std::string::npos &&
        c.k / 256 / c.splits >= 28;
    EXPECT_EQ(DecodeRangeEntry(*plan, 1).config.text,
              k_major ? "tile=16x128x256,warps=1x8,stages=4,mma=wgmma,"
                        "layout=kmajor"
                      : "tile=16x128x256,warps=1x8,stages=4,mma=wgmma");
    EXPECT_EQ(DecodeRangeEntry(*plan, 1).launch.grid_z, c.splits);
  }
  // bf16 in group scales takes the same long splits since planner v54
  // (sweep dl: 0.97-0.985x the 256-row k-major tile at 8 tokens); channel-wise
  // scales keep planner v17's limit of 8 k-tiles per split, so the long-split
  // layers keep the 256-row k-major tile there.
  for (auto [n, k, splits, k_major_splits] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{8192, 28672, 4, 8},
        std::tuple<int64_t, int64_t, int64_t, int64_t>{28672, 8192, 1, 2}}) {
    SCOPED_TRACE(::testing::Message() << "bf16 N=" << n << " K=" << k);
    absl::StatusOr<Plan> plan = PlanKernels(DecodeRequest(
        "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", n, k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(DecodeRangeEntry(*plan, 0).config.text,
              "tile=8x128x256,warps=1x8,stages=4,mma=wgmma");
    EXPECT_EQ(DecodeRangeEntry(*plan, 0).launch.grid_z, splits);
    absl::StatusOr<Plan> channel_plan = PlanKernels(DecodeRequest(
        "weight=uint4,group=channel,scale=bf16,act=bf16,out=bf16", n, k));
    ASSERT_TRUE(channel_plan.ok()) << channel_plan.status();
    EXPECT_EQ(DecodeRangeEntry(*channel_plan, 0).config.text,
              "tile=8x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
    EXPECT_EQ(DecodeRangeEntry(*channel_plan, 0).launch.grid_z, k_major_splits);
  }
  // 8-bit weights with bf16 activations keep the limit too (unmeasured
  // there): uint8 in groups of 128 on 8192 x 8192 (the long-split tile's
  // 64 k-tiles of 128 columns in 4 splits, 16 per split) keeps its 256-row
  // k-major tile at 8 tokens.
  absl::StatusOr<Plan> w8_bf16 = PlanKernels(DecodeRequest(
      "weight=uint8,group=128,scale=bf16,act=bf16,out=bf16", 8192, 8192));
  ASSERT_TRUE(w8_bf16.ok()) << w8_bf16.status();
  EXPECT_NE(DecodeRangeEntry(*w8_bf16, 0)
                .config.text.find("tile=8x256x64,warps=1x8,stages=5,mma=wgmma"),
            std::string::npos)
      << DecodeRangeEntry(*w8_bf16, 0).config.text;
  EXPECT_NE(DecodeRangeEntry(*w8_bf16, 0).config.text.find("layout=kmajor"),
            std::string::npos);
  EXPECT_EQ(DecodeRangeEntry(*w8_bf16, 0).launch.grid_z, 8);
  // The fill bound: 100 row blocks in 2 splits fill 76% of the wave, 95
  // in 2 fill 72% and keep their tile; bf16 with channel-wise scales at 9
  // k-tiles per split (8192 x 9216) keeps its 256-row tile, with group
  // scales it takes the long split; a layer of one k-tile (1408 x 256 on
  // 114 SMs: 11 row blocks) never splits past its k-tiles to fill the wave.
  auto first_tile = [](const char* spec, int64_t n, int64_t k, int sms) {
    absl::StatusOr<Plan> plan = PlanKernels(
        testing::GemmRequest(spec, n, k, "sm_90a", sms, kCurrentLaunchAbi));
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? DecodeRangeEntry(*plan, 0) : PlanEntry();
  };
  const char* const kW4 = "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16";
  const PlanEntry filled = first_tile(kW4, 12800, 8192, 132);
  EXPECT_EQ(filled.config.text, "tile=8x128x256,warps=1x8,stages=4,mma=wgmma");
  EXPECT_EQ(filled.launch.grid_z, 2);
  EXPECT_EQ(first_tile(kW4, 12160, 8192, 132).config.text.find("x256,"),
            std::string::npos);
  const PlanEntry bf16_9 =
      first_tile("weight=uint4,group=channel,scale=bf16,act=bf16,out=bf16",
                 8192, 9216, 132);
  EXPECT_EQ(bf16_9.config.text,
            "tile=8x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
  const PlanEntry bf16_9_groups = first_tile(
      "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 8192, 9216, 132);
  EXPECT_EQ(bf16_9_groups.config.text,
            "tile=8x128x256,warps=1x8,stages=4,mma=wgmma");
  EXPECT_EQ(bf16_9_groups.launch.grid_z, 4);
  const PlanEntry one_tile = first_tile(kW4, 1408, 256, 114);
  EXPECT_EQ(one_tile.config.text.find("x256,"), std::string::npos)
      << one_tile.config.text;
  EXPECT_LE(one_tile.launch.grid_z * 64, 256);
  // 16 and 32 tokens: a split of exactly 4 k-tiles takes the rule (8192 x
  // 4096: 4 splits of 16), one of 3.75 does not (8192 x 3840). Asked for a
  // client before k-split tiles: since planner v62 the later ones take
  // warpgroup k-slices on both layers at 16 and 32 tokens.
  const PlanEntry four_tiles = DecodeRangeEntry(
      *PlanKernels(testing::GemmRequest(kW4, 8192, 4096, "sm_90a", 132,
                                        kLaunchAbiKMajorScales)),
      1);
  EXPECT_EQ(four_tiles.config.text,
            "tile=16x128x256,warps=1x8,stages=4,mma=wgmma");
  EXPECT_EQ(four_tiles.launch.grid_z, 4);
  const Plan short_plan = *PlanKernels(testing::GemmRequest(
      kW4, 8192, 3840, "sm_90a", 132, kLaunchAbiKMajorScales));
  for (int i : {1, 2}) {
    EXPECT_EQ(DecodeRangeEntry(short_plan, i).config.text.find("x256,"),
              std::string::npos)
        << DecodeRangeEntry(short_plan, i).config.text;
  }
  // 8-bit weights: 128-column k-tiles at 8 tokens only (e4m3 too), and not
  // for widths no sweep measured (6 bits).
  for (const char* spec : {"weight=uint8,group=128,scale=fp16",
                           "weight=e4m3,group=128,scale=fp16"}) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Plan> w8 = PlanKernels(DecodeRequest(spec, 28672, 8192));
    ASSERT_TRUE(w8.ok()) << w8.status();
    EXPECT_EQ(DecodeRangeEntry(*w8, 0).config.text,
              "tile=8x128x128,warps=1x8,stages=4,mma=wgmma");
    EXPECT_EQ(DecodeRangeEntry(*w8, 0).launch.grid_z, 1);
    EXPECT_EQ(DecodeRangeEntry(*w8, 1).config.text,
              "tile=16x128x128,warps=1x8,stages=4,mma=wgmma");
  }
  absl::StatusOr<Plan> w6 = PlanKernels(
      DecodeRequest("weight=uint6,group=128,scale=fp16", 8192, 8192));
  ASSERT_TRUE(w6.ok()) << w6.status();
  EXPECT_NE(DecodeRangeEntry(*w6, 0).config.text,
            "tile=8x128x128,warps=1x8,stages=4,mma=wgmma");
  EXPECT_EQ(DecodeRangeEntry(*w6, 0).config.text.find("x256,"),
            std::string::npos)
      << DecodeRangeEntry(*w6, 0).config.text;
}

// Layers with more 128-row n-blocks than block slots (planner v26, sweeps at
// and au) run unsplit at every decode range. The 16 KB k-tile tiles of the
// long-split rule give way at 8 and 16 tokens to the default 256-row k-major
// tiles where those apply (N a multiple of 256, one scale per row, no zero
// points), and stay elsewhere: at 32 tokens with 4-bit weights and fp16
// activations (bf16 ones in group scales too since planner v54), at 8
// tokens with 8-bit weights, and at 8 and 16 tokens on layers without the
// k-major tiles.
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
      // bf16 in group scales: fp16's tiles (planners v53 / v54; the
      // 32-token one unmeasured past a wave).
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16",
       57344,
       8192,
       {kKMajor8, kKMajor16, kWideK32, kPlain64}},
      // Channel-wise scales keep bf16's limit of 8 k-tiles per split.
      {"weight=uint4,group=channel,scale=bf16,act=bf16,out=bf16",
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
    absl::StatusOr<Plan> plan = PlanKernels(DecodeRequest(c.spec, c.n, c.k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (int i = 0; i < 4; ++i) {
      if (c.tiles[i] != nullptr) {
        EXPECT_EQ(DecodeRangeEntry(*plan, i).config.text, c.tiles[i])
            << "range " << i;
      }
      EXPECT_EQ(DecodeRangeEntry(*plan, i).launch.grid_z, 1) << "range " << i;
    }
  }
  // 264 n-blocks fill one wave: the one-wave rule's long-split tiles hold at
  // 8 and 16 tokens (at 16 with k-major scales: 32 k-tiles, planner v61).
  absl::StatusOr<Plan> one_wave = PlanKernels(DecodeRequest(
      "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 264 * 128, 8192));
  ASSERT_TRUE(one_wave.ok()) << one_wave.status();
  EXPECT_EQ(DecodeRangeEntry(*one_wave, 0).config.text,
            "tile=8x128x256,warps=1x8,stages=4,mma=wgmma");
  EXPECT_EQ(DecodeRangeEntry(*one_wave, 1).config.text,
            "tile=16x128x256,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
}

// k-major scales (planner v12) on the 256-row tiles of specs whose kernel
// can read them (one scale per row, no zero points), never on 128-row tiles
// (slower: 8192 x 8192's four-per-SM tile at v12) nor on specs the kernel
// refuses (zero points, 2-D block and tensor scales), which keep their 256-row
// tiles with row windows.

}  // namespace
}  // namespace hummingd
