// The decode plan's k-split warp tiles (kernels/gemm_decode_ksplit.h,
// through the planner): where each measured rule takes them, in which block
// shape and residency, unsplit and filling the machine, and where every
// bound leaves the layer's other tile.

#include "kernels/gemm_decode_ksplit.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gemm/wgmma_config.cuh"
#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/gemm_config.h"
#include "kernels/gemm_decode_plan.h"
#include "kernels/launch_abi.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

using testing::DecodeRangeEntry;
using testing::H200GemmRequest;

// Planners v64 / v65's tiles for 8-bit weights at 17-32 and 9-16 tokens.
constexpr char kEightBitSlices[] =
    "tile=32x64x256,warps=1x8,stages=6,mma=wgmma,ksplit=2,blocks=1,early=1";
constexpr char kEightBitSlices16[] =
    "tile=16x64x256,warps=1x8,stages=6,mma=wgmma,ksplit=2,blocks=1,early=1";

// Planner v19: k-split warps at 8 tokens where K <= 4096 and the narrowest
// block (16 rows, else 32) fills >= 2/3 of one wave at two per SM, unsplit;
// not on long K, scale groups under 32 columns (under 128 before planner
// v35), 5- to 7-bit weights, or grids that fill too little. Planner v20: 4-bit
// weights up to K = 8192 in 32-row blocks, and 8-bit ones at 16 tokens over
// 16-row blocks where K <= 4096. Planner v21: 8-bit weights with fp16
// activations at 8 tokens past K = 4096 in 16-row blocks, two per SM up to K =
// 14336 or, where N / 16 fills four per SM (more than three), four per SM for
// 4096 < K <= 8192; 16-token tiles with fp16 activations only. Planner v23: two
// per SM up to K = 16384, 16-token tiles with bf16 activations too and, with
// fp16 activations where N / 16 fills three per SM (more than two), three per
// SM.
TEST(GemmDecodeKSplitTest, KSplitWarpsFillTheMachineUnsplit) {
  struct Case {
    const char* spec;
    int64_t n, k;
    const char* tile;
    const char* tile_16_tokens;  // "": not a k-split tile
  };
  const Case cases[] = {
      // 4-bit weights at 16 tokens: 128 32-row blocks of sixteen warps
      // (v24), and 88 (2/3 of the SMs).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4096, 4096,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8",
       "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1,"
       "early=1"},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 4096, 4096,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8",
       "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1,"
       "early=1"},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 2816, 4096,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8",
       "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1,"
       "early=1"},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4096, 3072,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8",
       "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1,"
       "early=1"},
      // 132 32-row blocks: all of the SMs.
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 4224, 4096,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8",
       "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1,"
       "early=1"},
      // 8-bit weights, fp16 activations, past K = 4096 (v21) at 8 tokens;
      // at 16 tokens on long K (planner v59): the same
      // blocks in three stages where N / 32 fills 15/16 of the SMs, K
      // 8192-16384, fp16 activations; not 3584 rows (112 blocks), bf16, or
      // K = 4096 / 17408.
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 4096, 14336,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8",
       "tile=16x32x1024,warps=1x16,stages=3,mma=wgmma,ksplit=8,blocks=1,"
       "early=1"},
      {"weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16", 4096, 8192,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8",
       "tile=16x32x1024,warps=1x16,stages=3,mma=wgmma,ksplit=8,blocks=1,"
       "early=1"},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 4096, 16384,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8",
       "tile=16x32x1024,warps=1x16,stages=3,mma=wgmma,ksplit=8,blocks=1,"
       "early=1"},
      // K = 2048 and specs not measured with it: not the v24 block.
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4096, 2048,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8", ""},
      // Channel-wise scales and integer zero points in groups of 128 take
      // it since planner v69 (sweep ff).
      {"weight=uint4,group=channel,scale=fp16", 4096, 4096,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8",
       "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1,"
       "early=1"},
      // Groups of 32 and 64 at 8 and 16 tokens as groups of 128 (planner
      // v35, sweep bs: M = 1 / 8 / 16 4.18 / 4.43 / 6.12 µs for groups of
      // 32 against 6.15 / 6.39 / 7.56 for their 8x128x128 tiles).
      {"weight=uint4,group=32,scale=fp16", 4096, 4096,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8",
       "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1,"
       "early=1"},
      {"weight=uint4,group=64,scale=bf16,act=bf16,out=bf16", 4096, 4096,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8",
       "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1,"
       "early=1"},
      {"weight=uint4,group=128,scale=fp16,zero=int", 4096, 4096,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8",
       "tile=16x32x1024,warps=1x16,stages=4,mma=wgmma,ksplit=8,blocks=1,"
       "early=1"},
      {"weight=int4,group=128,scale=fp16", 4096, 4096,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8", ""},
      {"weight=uint4,group=256,scale=fp16", 4096, 4096,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8", ""},
      // And the warpgroup k-slices (planner v69).
      {"weight=uint4,group=channel,scale=fp16", 6144, 4096,
       "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4",
       "tile=16x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,"
       "early=1"},
      {"weight=uint4,group=128,scale=fp16,zero=int", 4096, 2048,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8", ""},
      {"weight=uint3,group=128,scale=fp16", 4096, 4096,
       "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8", ""},
      {"weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16", 4096, 4096,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8",
       "tile=16x16x512,warps=1x8,stages=4,mma=wgmma,ksplit=8"},
      // bf16 activations at 16 tokens too (v23).
      {"weight=uint8,group=128,scale=bf16,act=bf16,out=bf16", 4096, 2048,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8",
       "tile=16x16x512,warps=1x8,stages=4,mma=wgmma,ksplit=8"},
      // At 16 tokens 384 16-row blocks three per SM (v23), with fp16
      // activations only (bf16 was measured two per SM only).
      {"weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16", 6144, 4096,
       "tile=8x32x512,warps=1x8,stages=4,mma=wgmma,ksplit=4",
       "tile=16x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=3"},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 6144, 2048,
       "tile=8x32x512,warps=1x8,stages=4,mma=wgmma,ksplit=4",
       "tile=16x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=3"},
      // 396 16-row blocks: all three per SM.
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 6336, 4096,
       "tile=8x32x512,warps=1x8,stages=4,mma=wgmma,ksplit=4",
       "tile=16x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=3"},
      // Integer zero points: their windows take the three-per-SM ring past
      // 75 KB, so two per SM would be all it got; no k-split block.
      {"weight=uint8,group=128,scale=fp16,zero=int,act=fp16,out=fp16", 6144,
       4096, "tile=8x32x512,warps=1x8,stages=4,mma=wgmma,ksplit=4", ""},
      {"weight=uint8,group=128,scale=bf16,act=bf16,out=bf16", 6144, 4096,
       "tile=8x32x512,warps=1x8,stages=4,mma=wgmma,ksplit=4", ""},
      // 264 16-row blocks: exactly two per SM.
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 4224, 4096,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8",
       "tile=16x16x512,warps=1x8,stages=4,mma=wgmma,ksplit=8"},
      // 400 16-row blocks: more than three per SM.
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 6400, 4096,
       "tile=8x32x512,warps=1x8,stages=4,mma=wgmma,ksplit=4", ""},
      // 176 32-row blocks: exactly 2/3 of the wave. At 16 (and 32) tokens
      // warpgroup k-slices over 88 64-row blocks since planner v60.
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 5632, 4096,
       "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4",
       "tile=16x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,"
       "early=1"},
      // 4-bit 32-row blocks up to K = 8192 (v20); at 16 tokens warpgroup
      // k-slices (v57; and from K = 2048 since planner v62).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 8192, 8192,
       "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4,early=1",
       "tile=16x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,"
       "early=1"},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 8192, 5120,
       "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4",
       "tile=16x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1,"
       "early=1"},
      // 4-bit weights, fp16 activations, 8192 < K <= 16384 in 16-row blocks
      // of three stages (v55), 224 or 256 of them.
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4096, 14336,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8", ""},
      // 176 16-row blocks: exactly 2/3 of the wave.
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 2816, 14336,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8", ""},
      {"weight=uint4,group=128,scale=bf16,act=fp16,out=fp16", 3584, 12288,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8", ""},
      // bf16 activations since planner v56 (v103's lane offsets), where the
      // 16-row blocks fill at least 15/16 of the wave: 256 of 264, and 248
      // (3968 rows) just above the boundary (247.5).
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 4096, 14336,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8", ""},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 4096, 12288,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8", ""},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 4096, 16384,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8", ""},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 3968, 14336,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8", ""},
      {"weight=uint4,group=64,scale=bf16,act=bf16,out=bf16", 4096, 14336,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8", ""},
      {"weight=uint4,group=64,scale=fp16,act=fp16,out=fp16", 4096, 16384,
       "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8", ""},
      // At 16 tokens since planner v65 two-warpgroup k-slices where 64-row
      // blocks fill 5/6 of the SMs and 4096 <= K <= 8192
      // (EightBitTwoWarpgroupSlicesAt16Tokens).
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 8192, 8192,
       "tile=8x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=4",
       kEightBitSlices16},
      {"weight=uint8,group=channel,scale=fp16,act=fp16,out=fp16", 8192, 8192,
       "tile=8x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=4",
       kEightBitSlices16},
      // K <= 4096 keeps v19's 32-row blocks on N = 8192.
      {"weight=uint8,group=channel,scale=fp16,act=fp16,out=fp16", 8192, 4096,
       "tile=8x32x512,warps=1x8,stages=4,mma=wgmma,ksplit=4",
       kEightBitSlices16},
      // 400 16-row blocks: just over three per SM.
      {"weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16", 6400, 8192,
       "tile=8x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=4", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.spec << " N=" << c.n << " K=" << c.k);
    const KernelRequest request = H200GemmRequest(c.spec, c.n, c.k);
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    // M = 1's entry (early=1, where planned from M = 6, comes after it).
    EXPECT_EQ(plan->entries[0].config.text, c.tile);
    const PlanEntry at_16 = DecodeRangeEntry(*plan, 1);
    EXPECT_EQ(at_16.config.text.find("ksplit") != std::string::npos,
              *c.tile_16_tokens != '\0')
        << at_16.config.text;
    if (*c.tile_16_tokens != '\0') {
      EXPECT_EQ(at_16.config.text, c.tile_16_tokens);
    }
    for (const PlanEntry& entry : plan->entries) {
      if (entry.m_max > 16) break;
      if (entry.config.text.find("ksplit") == std::string::npos) continue;
      EXPECT_EQ(entry.launch.grid_z, 1);
      EXPECT_EQ(entry.launch.workspace_bytes_per_m_block, 0);
      absl::StatusOr<GemmTileConfig> tile =
          ParseGemmTileText(entry.config.text);
      ASSERT_TRUE(tile.ok()) << tile.status();
      // One or two per SM filling >= 2/3 of that wave (one per SM: 6/11 for
      // the warpgroup k-slices on K <= 8192, planner v60), or three or four
      // per SM filling more than one fewer would (the block scheduler packs
      // blocks as densely as they fit).
      const int per_sm = WgmmaBlocksPerSm(*tile);
      // One per SM is the sixteen-warp block or 8-bit weights' two
      // warpgroup slices (planner v65); four per SM only at 8 tokens, one
      // and three only at 16.
      const bool eight_bit_slices = entry.config.text == kEightBitSlices16;
      EXPECT_EQ(per_sm == 1, tile->warps_n == 16 || eight_bit_slices) << per_sm;
      if (per_sm == 4) {
        EXPECT_EQ(tile->block_m, 8);
      }
      if (per_sm == 3 || per_sm == 1) {
        EXPECT_EQ(tile->block_m, 16) << "one or three per SM only at 16 tokens";
      }
      EXPECT_LE(entry.launch.grid_y, per_sm * 132);
      if (per_sm == 1) {
        const bool slices = device::wgmma_warpgroup_slices(
            tile->block_m, tile->block_n, tile->warp_split_k);
        EXPECT_GE((slices && c.k <= 8192 ? 11 : 3) * entry.launch.grid_y,
                  (slices && c.k <= 8192 ? 6 : 2) * 132);
        EXPECT_EQ(tile->warps_n, eight_bit_slices ? 8 : 16);
      } else if (per_sm == 2) {
        EXPECT_GE(3 * entry.launch.grid_y, 2 * 2 * 132);
      } else {
        EXPECT_GT(entry.launch.grid_y, (per_sm - 1) * 132);
      }
      // By shared memory exactly per_sm, whatever the kernel's static bytes
      // (k-split tiles have none).
      EXPECT_EQ(Sm90ResidentBlocks(tile->Threads(), 1,
                                   entry.launch.dynamic_shared_memory),
                per_sm);
      EXPECT_EQ(Sm90ResidentBlocks(tile->Threads(), 1,
                                   entry.launch.dynamic_shared_memory, 0),
                per_sm);
      absl::StatusOr<KernelSource> stub = GenerateStub(request, entry.config);
      ASSERT_TRUE(stub.ok()) << stub.status();
      // The k-split count is the tile's ninth argument; the blocks per SM,
      // where not the default two, its tenth.
      // early=N, where set, its eleventh (after the blocks per SM).
      const std::string tail =
          tile->early_tiles > 0
              ? absl::StrCat(", ", tile->warp_split_k, ", ", per_sm, ", ",
                             tile->early_tiles, ">;")
          : per_sm == 2
              ? absl::StrCat(", ", tile->warp_split_k, ">;")
              : absl::StrCat(", ", tile->warp_split_k, ", ", per_sm, ">;");
      EXPECT_NE(stub->source.find(tail), std::string::npos) << stub->source;
    }
    // 32 tokens and up keep their tiles, but for warpgroup k-slices at 32
    // (planners v57, v60 and v69;
    // WarpgroupSlicesTakeOneWaveOfSixtyFourRowBlocks,
    // WarpgroupSlicesOnShortKFromSixEleventhsOfTheSms,
    // WarpgroupSlicesTakeChannelZeroPointAndGroup32Specs) and, for 8-bit
    // weights with fp16 activations and no zero points on 80-132 64-row
    // blocks and K 2048-8192, their two-warpgroup form (planner v64,
    // EightBitTwoWarpgroupSlicesAt32Tokens).
    const absl::StatusOr<QuantSpec> parsed = ParseSpecText(c.spec);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    const QuantSpec spec = Canonicalize(*parsed);
    const bool eight_bit_fp16 = spec.weight.bits == 8 &&
                                spec.activation_type == DataType::kFp16 &&
                                spec.zero_point == ZeroPointKind::kNone;
    for (int i = 2; i < 4; ++i) {
      const PlanEntry entry = DecodeRangeEntry(*plan, i);
      const bool four_bit_slices =
          (((c.n == 8192 && (c.k == 8192 || c.k == 5120)) ||
            (c.n == 5632 && c.k == 4096)) &&
           std::string(c.spec).find("uint4,group=128,") != std::string::npos) ||
          (c.n == 6144 && c.k == 4096 &&
           std::string(c.spec).find("uint4,group=channel,") !=
               std::string::npos);
      const bool eight_bit_slices = eight_bit_fp16 && c.n / 64 >= 80 &&
                                    c.n / 64 <= 132 && c.k >= 2048 &&
                                    c.k <= 8192;
      const bool slices = i == 2 && (four_bit_slices || eight_bit_slices);
      EXPECT_EQ(entry.config.text.find("ksplit") != std::string::npos, slices)
          << entry.config.text;
    }
  }
  const Case kept[] = {
      // v55's long-K 4-bit rule: not past K = 16384, with zero points,
      // channel-wise scales or 3-bit weights, or where 16-row blocks fill
      // under 2/3 of the wave (2816 rows: 176 blocks is 2/3 exactly, 2688
      // under) or more than it; with bf16 activations (v56) not under 15/16
      // of it (3584 x 14336, 224 blocks, lost 5-6% in sweep dn and 2-4% in
      // sweep dt; 3904 rows, 244 blocks, the wgmma decode layer just under).
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 3584, 14336, "",
       ""},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 3904, 14336, "",
       ""},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 4352, 14336, "",
       ""},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4096, 17408, "",
       ""},
      {"weight=uint4,group=128,scale=fp16,zero=int,act=fp16,out=fp16", 4096,
       14336, "", ""},
      {"weight=uint4,group=channel,scale=fp16,act=fp16,out=fp16", 4096, 14336,
       "", ""},
      {"weight=uint3,group=128,scale=fp16,act=fp16,out=fp16", 4096, 14336, "",
       ""},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 2688, 14336, "",
       ""},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4352, 14336, "",
       ""},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4096, 4608, "",
       ""},
      // K = 5120 and 8192: 16-row blocks only up to K = 4096.
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4096, 5120, "",
       ""},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4096, 8192, "",
       ""},
      // Past K = 4096 (8-bit with bf16 activations), 16384 (8-bit, two per
      // SM) and 8192 (8-bit, four per SM); 4-bit past K = 8192 below.
      {"weight=uint8,group=128,scale=bf16,act=bf16,out=bf16", 4096, 14336, "",
       ""},
      {"weight=uint8,group=128,scale=bf16,act=bf16,out=bf16", 8192, 8192, "",
       ""},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 4096, 17408, "",
       ""},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 8192, 12288, "",
       ""},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 8192, 28672, "",
       ""},
      // 384 16-row blocks fill three per SM, not four; 640 more than four.
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 6144, 8192, "",
       ""},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 10240, 8192, "",
       ""},
      {"weight=uint5,group=128,scale=fp16", 4096, 4096, "", ""},
      {"weight=uint4,group=16,scale=fp16", 4096, 4096, "", ""},
      {"weight=uint6,group=128,scale=fp16", 4096, 4096, "", ""},
      // 160 32-row blocks: less than 2/3 of the wave (in groups of 32 with
      // zero points: planner v60's warpgroup k-slices take its 80 64-row
      // blocks at 16 and 32 tokens in groups of 128 and 64, v69's at 16 in
      // groups of 32 and with zero points in groups of 128 and 64).
      {"weight=uint4,group=32,scale=fp16,zero=int,act=fp16,out=fp16", 5120,
       4096, "", ""},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 2048, 4096, "",
       ""},
      // 86 and 134 32-row blocks: under 2/3 of the SMs, more than all (4288
      // is also 67 64-row blocks, under the 6/11 of the SMs planner v60
      // takes).
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 2752, 4096, "",
       ""},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4288, 4096, "",
       ""},
  };
  for (const Case& c : kept) {
    SCOPED_TRACE(::testing::Message()
                 << c.spec << " N=" << c.n << " K=" << c.k);
    absl::StatusOr<Plan> plan = PlanKernels(H200GemmRequest(c.spec, c.n, c.k));
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (const PlanEntry& entry : plan->entries) {
      // Planner v64's 32-token slices, which 6144 x 8192 takes, are not
      // what these bounds keep out (EightBitTwoWarpgroupSlicesAt32Tokens).
      if (c.n == 6144 && c.k == 8192 && entry.m_max == 32 &&
          entry.config.text == kEightBitSlices) {
        continue;
      }
      EXPECT_EQ(entry.config.text.find("ksplit"), std::string::npos)
          << entry.config.text;
    }
  }
  // A GPU whose blocks may opt into less shared memory than the 96 KB ring
  // keeps the split-K tile.
  LayerShape shape;
  shape.n = 4096;
  shape.k = 4096;
  absl::StatusOr<std::vector<PlanEntry>> small_smem = PlanWgmmaDecode(
      Canonicalize(*ParseSpecText(
          "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16")),
      shape, 132, 90 * 1024, kCurrentLaunchAbi);
  ASSERT_TRUE(small_smem.ok()) << small_smem.status();
  EXPECT_EQ((*small_smem)[0].config.text.find("ksplit"), std::string::npos)
      << (*small_smem)[0].config.text;
}

// What every unsplit warpgroup-slice entry of an n-row layer holds: a
// 64-row block per SM over the whole of K in `threads`-thread blocks (no
// split-K workspace), one block per SM by its ring (fits one, not two), and
// a stub instantiating `stub_tile` under launch bounds of one block per SM.
void ExpectOneSliceBlockPerSm(const KernelRequest& request,
                              const PlanEntry& entry, int64_t n, int threads,
                              const std::string& stub_tile) {
  EXPECT_EQ(entry.launch.grid_y, n / 64);
  EXPECT_EQ(entry.launch.grid_z, 1);
  EXPECT_EQ(entry.launch.block_x, threads);
  EXPECT_EQ(entry.launch.workspace_bytes_per_m_block, 0);
  absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(entry.config.text);
  ASSERT_TRUE(tile.ok()) << tile.status();
  EXPECT_TRUE(device::wgmma_warpgroup_slices(tile->block_m, tile->block_n,
                                             tile->warp_split_k));
  EXPECT_EQ(WgmmaBlocksPerSm(*tile), 1);
  EXPECT_EQ(Sm90ResidentBlocks(tile->Threads(), 1,
                               entry.launch.dynamic_shared_memory),
            1);
  EXPECT_EQ(Sm90ResidentBlocks(tile->Threads(), 1,
                               entry.launch.dynamic_shared_memory, 0),
            1);
  absl::StatusOr<KernelSource> stub = GenerateStub(request, entry.config);
  ASSERT_TRUE(stub.ok()) << stub.status();
  EXPECT_NE(stub->source.find(stub_tile), std::string::npos) << stub->source;
  EXPECT_NE(
      stub->source.find(absl::StrCat("__launch_bounds__(", threads, ", 1)")),
      std::string::npos);
}

// A layer's planned tiles at 16 and 32 tokens: warpgroup k-slices or not.
struct SliceCase {
  const char* spec;
  int64_t n, k;
  bool at_16, at_32;
};

// The slice tile exactly where `c` expects it (with k-major scales at 32
// tokens over 16 or more k-tiles in groups of 128 without zero points,
// planner v61; pre-scaled at 32 tokens in groups of 32, planner v69), in
// unsplit 512-thread blocks one per SM (ExpectOneSliceBlockPerSm).
void ExpectWarpgroupSlices(const SliceCase& c) {
  SCOPED_TRACE(::testing::Message() << c.spec << " N=" << c.n << " K=" << c.k);
  const KernelRequest request = H200GemmRequest(c.spec, c.n, c.k);
  absl::StatusOr<Plan> plan = PlanKernels(request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const int range : {1, 2}) {
    const bool expected = range == 1 ? c.at_16 : c.at_32;
    const PlanEntry entry = DecodeRangeEntry(*plan, range);
    const int tokens = range == 1 ? 16 : 32;
    // At 32 tokens over 16 or more k-tiles, in groups of 128, with k-major
    // scales (planner v61, KMajorScalesOnLongSplitsTest).
    const std::string spec = c.spec;
    const bool k_major = tokens == 32 && c.k / 512 >= 16 &&
                         spec.find("group=128,") != std::string::npos &&
                         spec.find("zero=") == std::string::npos;
    const bool prescaled =
        tokens == 32 && spec.find("group=32,") != std::string::npos;
    const std::string slices = absl::StrCat(
        "tile=", tokens, "x64x512,warps=1x16,stages=4,mma=wgmma,",
        prescaled ? "scales=pre," : "", k_major ? "layout=kmajor," : "",
        "ksplit=4,blocks=1,early=1");
    EXPECT_EQ(entry.config.text == slices, expected)
        << range << ": " << entry.config.text;
    if (!expected) continue;
    ExpectOneSliceBlockPerSm(
        request, entry, c.n, 512,
        absl::StrCat("WgmmaTile<", tokens, ", 64, 512, 4, 4, false, ",
                     prescaled ? "true" : "false", ", ",
                     k_major ? "true" : "false", ", 4, 1, 1>;"));
  }
}

// Planner v57 (sweeps dv-dz): 4-bit weights at 16 and 32 tokens take one 64-row
// block per SM whose four warpgroups split each k-tile (16x64x512 / 32x64x512
// s4 ksplit=4, 512 threads), unsplit, where N / 64 fills 15/16 to all of the
// SMs in one wave, from K = 8192 (2048 / 3072 since planner v62) to 14336 (16
// tokens) or 28672 (32), groups of 128 or 64. Each bound is checked on both
// sides.
TEST(GemmDecodeKSplitTest, WarpgroupSlicesTakeOneWaveOfSixtyFourRowBlocks) {
  const char* kFp16 = "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16";
  const char* kBf16 = "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16";
  const SliceCase cases[] = {
      {kFp16, 8192, 8192, true, true},
      {kBf16, 8192, 8192, true, true},
      // 16 tokens up to K = 14336 (8192 x 28672 lost there, sweep dz), 32
      // up to K = 28672.
      {kFp16, 8192, 14336, true, true},
      {kBf16, 8192, 14336, true, true},
      {kFp16, 8192, 14848, false, true},
      {kFp16, 8192, 28672, false, true},
      {kBf16, 8192, 28672, false, true},
      {kFp16, 8192, 29184, false, false},
      // Below K = 8192 since planner v62 (sweep eo), from K = 2048 (16
      // tokens) or 3072 (32).
      {kFp16, 8192, 7680, true, true},
      {kFp16, 8192, 4096, true, true},
      {kBf16, 8192, 4096, true, true},
      {kFp16, 8192, 2560, true, false},
      {kFp16, 8192, 1536, false, false},
      // 124 blocks fill 15/16 of 132 SMs (123.75), 123 do not, so past K =
      // 8192 123 keep their tiles; up to 8192 planner v60 takes them
      // (WarpgroupSlicesOnShortKFromSixEleventhsOfTheSms); 132 is a wave,
      // 133 more.
      {kFp16, 7936, 8192, true, true},
      {kFp16, 7936, 14336, true, true},
      {kFp16, 7872, 14336, false, false},
      {kFp16, 7872, 8192, true, true},
      {kFp16, 8448, 8192, true, true},
      {kFp16, 8512, 8192, false, false},
      // Only the specs measured: groups of 128 and 64 (and planner v69's,
      // WarpgroupSlicesTakeChannelZeroPointAndGroup32Specs).
      {"weight=uint4,group=64,scale=fp16,act=fp16,out=fp16", 8192, 8192, true,
       true},
      {"weight=uint3,group=128,scale=fp16,act=fp16,out=fp16", 8192, 8192, false,
       false},
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 8192, 8192, false,
       false},
  };
  for (const SliceCase& c : cases) ExpectWarpgroupSlices(c);
  // A client that cannot load k-split tiles keeps the split tiles.
  absl::StatusOr<Plan> old_client = PlanKernels(testing::GemmRequest(
      kFp16, 8192, 8192, "sm_90a", 132, kLaunchAbiKSplitTiles - 1));
  ASSERT_TRUE(old_client.ok()) << old_client.status();
  for (const int range : {1, 2}) {
    EXPECT_EQ(DecodeRangeEntry(*old_client, range).config.text.find("ksplit"),
              std::string::npos);
  }
  // Warpgroup slices need four stages (their wgmmas may read the slot of
  // the tile before past its barrier); the host's validation says so.
  absl::StatusOr<GemmTileConfig> three = ParseGemmTileText(
      "tile=16x64x512,warps=1x16,stages=3,mma=wgmma,ksplit=4,blocks=1");
  ASSERT_TRUE(three.ok()) << three.status();
  const absl::Status valid = ValidateGemmTile(*three, 8192, 8192);
  EXPECT_FALSE(valid.ok());
  EXPECT_NE(valid.message().find("4..12 stages"), std::string::npos)
      << valid.message();
  absl::StatusOr<GemmTileConfig> four = ParseGemmTileText(
      "tile=32x64x512,warps=1x16,stages=4,mma=wgmma,ksplit=4,blocks=1");
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_TRUE(ValidateGemmTile(*four, 8192, 8192).ok());
}

// Planner v60 (sweeps ef-eh): the same warpgroup k-slices, unsplit, where N /
// 64 fills 6/11 (72 blocks on 132 SMs, the least measured) to under 15/16 of
// the SMs and K <= 8192, from K = 2048 at 16 tokens and 3072 at 32; past K =
// 8192 such layers keep their split tiles (6144 x 14336 lost). A wave's fill
// keeps v57's upper K and since planner v62 the same lower one.
TEST(GemmDecodeKSplitTest, WarpgroupSlicesOnShortKFromSixEleventhsOfTheSms) {
  const char* kFp16 = "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16";
  const char* kBf16 = "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16";
  const SliceCase cases[] = {
      {kFp16, 6144, 4096, true, true},
      {kBf16, 6144, 4096, true, true},
      {"weight=uint4,group=64,scale=fp16,act=fp16,out=fp16", 6144, 4096, true,
       true},
      // 72 blocks are 6/11 of 132 SMs, 71 fewer; 123 under 15/16, 124 a
      // wave's fill, which takes K up to 14336 / 28672 (below 8192 since
      // planner v62).
      {kFp16, 4608, 4096, true, true},
      {kFp16, 4544, 4096, false, false},
      {kBf16, 7872, 4096, true, true},
      {kFp16, 7936, 4096, true, true},
      {kFp16, 7872, 8704, false, false},
      {kFp16, 7936, 8704, true, true},
      // K from 2048 (16 tokens) or 3072 (32) to 8192.
      {kFp16, 6144, 2048, true, false},
      {kFp16, 6144, 1536, false, false},
      {kFp16, 6144, 2560, true, false},
      {kFp16, 6144, 3072, true, true},
      // K a multiple of 512 only (the tile's k-tile).
      {kFp16, 6144, 4224, false, false},
      {kFp16, 6144, 8192, true, true},
      {kFp16, 6144, 8704, false, false},
      {kFp16, 6144, 14336, false, false},
      // Only the specs v57 measured the slices with (and planner v69's,
      // WarpgroupSlicesTakeChannelZeroPointAndGroup32Specs).
      {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16", 6144, 4096, false,
       false},
  };
  for (const SliceCase& c : cases) ExpectWarpgroupSlices(c);
}

// Planner v69 (sweeps ff, fg): the same slices for three more 4-bit classes,
// with their own bounds. Channel-wise scales take the whole domain of groups
// of 128 (and since planner v72, sweep fj, K up to 28672 at 16 tokens too);
// integer zero points in groups of 128 or 64 take it at 16 tokens and
// at 32 with fp16 activations or on a wave's fill, up to K = 8192; groups of
// 32 take it at 16 tokens and, pre-scaled, at 32 on a wave's fill, up to K =
// 8192. Neighbouring specs (zero points with channel scales, in groups of 32,
// or as floats; fp32 scales; 8-bit weights' zero points) keep their tiles.
TEST(GemmDecodeKSplitTest, WarpgroupSlicesTakeChannelZeroPointAndGroup32Specs) {
  const char* kChannel =
      "weight=uint4,group=channel,scale=fp16,act=fp16,out=fp16";
  const char* kChannelBf16 =
      "weight=uint4,group=channel,scale=bf16,act=bf16,out=bf16";
  const char* kZero =
      "weight=uint4,group=128,scale=fp16,zero=int,act=fp16,out=fp16";
  const char* kZeroBf16 =
      "weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16";
  const char* kZero64Bf16 =
      "weight=uint4,group=64,scale=bf16,zero=int,act=bf16,out=bf16";
  const char* kG32 = "weight=uint4,group=32,scale=fp16,act=fp16,out=fp16";
  const char* kG32Bf16 = "weight=uint4,group=32,scale=bf16,act=bf16,out=bf16";
  const SliceCase cases[] = {
      // A wave's fill (8192 x 8192): all of them at 16 and 32 tokens.
      {kChannel, 8192, 8192, true, true},
      {kChannelBf16, 8192, 8192, true, true},
      {kZero, 8192, 8192, true, true},
      {kZeroBf16, 8192, 8192, true, true},
      {kZero64Bf16, 8192, 8192, true, true},
      {kG32, 8192, 8192, true, true},
      {kG32Bf16, 8192, 8192, true, true},
      // 96 blocks (6144 x 4096): at 32 tokens channel-wise scales, and zero
      // points with fp16 activations only; groups of 32 at 16 tokens only.
      {kChannel, 6144, 4096, true, true},
      {kChannelBf16, 6144, 4096, true, true},
      {kZero, 6144, 4096, true, true},
      {kZeroBf16, 6144, 4096, true, false},
      {kZero64Bf16, 6144, 4096, true, false},
      {kG32, 6144, 4096, true, false},
      {kG32Bf16, 6144, 4096, true, false},
      // 123 and 124 blocks: under and at 15/16 of the SMs (a wave's fill).
      {kZeroBf16, 7872, 4096, true, false},
      {kZeroBf16, 7936, 4096, true, true},
      {kG32, 7872, 4096, true, false},
      {kG32, 7936, 4096, true, true},
      // Past K = 8192 on a wave's fill: channel-wise scales to K = 28672 at
      // 16 and 32 tokens (planner v72; groups of 128 to 14336 at 16),
      // zero points and groups of 32 not at all.
      {kChannel, 8192, 14336, true, true},
      {kChannelBf16, 8192, 28672, true, true},
      {kChannel, 8192, 14848, true, true},
      {kChannel, 8192, 29184, false, false},
      {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 8192, 14848,
       false, true},
      {kZero, 8192, 8704, false, false},
      {kZero, 8192, 14336, false, false},
      {kG32, 8192, 8704, false, false},
      // The lower bounds of fill and K are the others': 71 blocks, K = 1536
      // (16 tokens) and 2560 (32).
      {kChannel, 4544, 4096, false, false},
      {kZero, 6144, 1536, false, false},
      {kG32, 8192, 2560, true, false},
      // Neighbouring specs.
      {"weight=uint4,group=channel,scale=fp16,zero=int,act=fp16,out=fp16", 8192,
       8192, false, false},
      {"weight=uint4,group=32,scale=fp16,zero=int,act=fp16,out=fp16", 8192,
       8192, false, false},
      {"weight=uint4,group=128,scale=fp16,zero=float,act=fp16,out=fp16", 8192,
       8192, false, false},
      {"weight=uint4,group=channel,scale=fp32,act=fp16,out=fp16", 8192, 8192,
       false, false},
      {"weight=uint4,group=channel,scale=fp16,scale2=tensor,act=fp16,out=fp16",
       8192, 8192, false, false},
      {"weight=int4,group=channel,scale=fp16,act=fp16,out=fp16", 8192, 8192,
       false, false},
      {"weight=uint3,group=channel,scale=fp16,act=fp16,out=fp16", 8192, 8192,
       false, false},
      {"weight=uint4,group=256,scale=fp16,act=fp16,out=fp16", 8192, 8192, false,
       false},
      {"weight=uint8,group=128,scale=fp16,zero=int,act=fp16,out=fp16", 8192,
       8192, false, false},
  };
  for (const SliceCase& c : cases) ExpectWarpgroupSlices(c);
}

// Planner v59 (sweeps ed, ee): 8-bit weights at 16 tokens with fp16
// activations take 32-row blocks of sixteen warps in three stages, unsplit,
// where N / 32 fills 15/16 to all of the SMs and 8192 <= K <= 16384.
TEST(GemmDecodeKSplitTest, EightBitLongKSixteenWarpBlocksWhereMeasured) {
  constexpr char kTile[] =
      "tile=16x32x1024,warps=1x16,stages=3,mma=wgmma,ksplit=8,blocks=1,"
      "early=1";
  auto at_16 = [](const char* spec, int64_t n, int64_t k) {
    absl::StatusOr<Plan> plan = PlanKernels(H200GemmRequest(spec, n, k));
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? DecodeRangeEntry(*plan, 1).config.text : "";
  };
  for (const char* spec :
       {"weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
        "weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16"}) {
    SCOPED_TRACE(spec);
    // K 8192-16384, 124-132 blocks.
    for (const auto& [n, k] : {std::pair<int64_t, int64_t>{4096, 8192},
                               {4096, 14336},
                               {4096, 16384},
                               {3968, 14336},
                               {4224, 14336}}) {
      EXPECT_EQ(at_16(spec, n, k), kTile) << n << "x" << k;
    }
    // Fewer blocks (3584: 112, measured slower; 3840: 120), more than the
    // SMs (4256: 133), K outside (7168, 17408; 4096 keeps v20's 16x16x512).
    for (const auto& [n, k] : {std::pair<int64_t, int64_t>{3584, 14336},
                               {3840, 14336},
                               {4256, 14336},
                               {4096, 7168},
                               {4096, 17408},
                               {4096, 4096}}) {
      EXPECT_EQ(at_16(spec, n, k).find("16x32x1024"), std::string::npos)
          << n << "x" << k;
    }
  }
  // bf16 activations (measured slower): not.
  EXPECT_EQ(
      at_16("weight=uint8,group=128,scale=bf16,act=bf16,out=bf16", 4096, 14336)
          .find("16x32x1024"),
      std::string::npos);
}

// A layer's planned tiles at 16 and 32 tokens: planners v64 / v65's 8-bit
// two-warpgroup slices or not.
struct EightBitSliceCase {
  const char* spec;
  int64_t n, k;
  bool at_16, at_32;
};

// The two-warpgroup slice tile exactly where `c` expects it from the
// range's first M, in unsplit 256-thread blocks one per SM
// (ExpectOneSliceBlockPerSm); never at 8 or 64 tokens.
void ExpectEightBitSlices(const EightBitSliceCase& c) {
  SCOPED_TRACE(::testing::Message() << c.spec << " N=" << c.n << " K=" << c.k);
  const KernelRequest request = H200GemmRequest(c.spec, c.n, c.k);
  absl::StatusOr<Plan> plan = PlanKernels(request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const int range : {0, 3}) {
    const std::string text = DecodeRangeEntry(*plan, range).config.text;
    EXPECT_NE(text, kEightBitSlices16);
    EXPECT_NE(text, kEightBitSlices);
  }
  for (const int range : {1, 2}) {
    const bool expected = range == 1 ? c.at_16 : c.at_32;
    const int tokens = range == 1 ? 16 : 32;
    const PlanEntry entry = DecodeRangeEntry(*plan, range);
    EXPECT_EQ(
        entry.config.text == (range == 1 ? kEightBitSlices16 : kEightBitSlices),
        expected)
        << range << ": " << entry.config.text;
    if (!expected) continue;
    EXPECT_EQ(entry.m_min, tokens / 2 + 1);
    EXPECT_EQ(entry.m_max, tokens);
    ExpectOneSliceBlockPerSm(
        request, entry, c.n, 256,
        absl::StrCat("WgmmaTile<", tokens,
                     ", 64, 256, 2, 6, false, false, false, 2, 1, 1>;"));
  }
}

const char* const kUint8Fp16 =
    "weight=uint8,group=128,scale=fp16,act=fp16,out=fp16";
const char* const kE4m3Fp16 =
    "weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16";

// Planner v64 (sweeps es, et): 8-bit weights with fp16 activations at
// 17-32 tokens take one 64-row block per SM whose two warpgroups split each
// 256-column k-tile (32x64x256 s6 ksplit=2 early=1, 256 threads), unsplit,
// where N / 64 fills 3/5 (80 of 132) to all of the SMs and 2048 <= K <=
// 8192; not with bf16 activations, zero points, second scales or groups
// under 128 columns. Each bound is checked on both sides (at 16 tokens
// planner v65's narrower bounds, EightBitTwoWarpgroupSlicesAt16Tokens).
TEST(GemmDecodeKSplitTest, EightBitTwoWarpgroupSlicesAt32Tokens) {
  const EightBitSliceCase cases[] = {
      {kUint8Fp16, 6144, 4096, false, true},
      {kE4m3Fp16, 6144, 4096, false, true},
      {kUint8Fp16, 8192, 8192, true, true},
      {kE4m3Fp16, 8192, 8192, true, true},
      {"weight=uint8,group=channel,scale=fp16,act=fp16,out=fp16", 6144, 4096,
       false, true},
      // 80 blocks are 3/5 of 132 SMs (79.2), 79 fewer; 132 a wave, 133 more.
      {kUint8Fp16, 5120, 4096, false, true},
      {kUint8Fp16, 5056, 4096, false, false},
      {kUint8Fp16, 8448, 4096, true, true},
      {kUint8Fp16, 8512, 4096, false, false},
      {kUint8Fp16, 4096, 4096, false, false},
      // N a multiple of 64 only (the tile's validation).
      {kUint8Fp16, 6176, 4096, false, false},
      // 8-bit weights only: 4-bit ones that planner v57 / v60's slices do
      // not take keep their tiles.
      {"weight=uint4,group=channel,scale=fp16,act=fp16,out=fp16", 6144, 4096,
       false, false},
      // K from 2048 to 8192.
      {kUint8Fp16, 6144, 2048, false, true},
      {kUint8Fp16, 6144, 1792, false, false},
      {kUint8Fp16, 6144, 8192, false, true},
      {kUint8Fp16, 6144, 8448, false, false},
      // fp16 activations (whatever the scales' type), no zero points or
      // second scales, groups of 128 or coarser.
      {"weight=uint8,group=128,scale=bf16,act=bf16,out=bf16", 6144, 4096, false,
       false},
      {"weight=uint8,group=128,scale=fp16,act=bf16,out=bf16", 6144, 4096, false,
       false},
      {"weight=uint8,group=128,scale=bf16,act=fp16,out=fp16", 6144, 4096, false,
       true},
      {"weight=uint8,group=128,scale=fp16,zero=int,act=fp16,out=fp16", 6144,
       4096, false, false},
      {"weight=e4m3,group=128,scale=fp16,scale2=tensor,act=fp16,out=fp16", 6144,
       4096, false, false},
      {"weight=uint8,group=64,scale=fp16,act=fp16,out=fp16", 6144, 4096, false,
       false},
  };
  for (const EightBitSliceCase& c : cases) ExpectEightBitSlices(c);
  // A client that cannot load k-split tiles keeps the split tiles.
  absl::StatusOr<Plan> old_client = PlanKernels(testing::GemmRequest(
      kUint8Fp16, 6144, 4096, "sm_90a", 132, kLaunchAbiKSplitTiles - 1));
  ASSERT_TRUE(old_client.ok()) << old_client.status();
  EXPECT_EQ(DecodeRangeEntry(*old_client, 2).config.text.find("ksplit"),
            std::string::npos);
}

// Planner v65 (sweep ev): the same two-warpgroup slices at 9-16 tokens
// (16x64x256), where N / 64 fills 5/6 (110 of 132) to all of the SMs and
// 4096 <= K <= 8192: 6144 x 4096 (96 blocks) keeps v23's three-per-SM
// k-split blocks, which measured faster there.
TEST(GemmDecodeKSplitTest, EightBitTwoWarpgroupSlicesAt16Tokens) {
  const EightBitSliceCase cases[] = {
      {kUint8Fp16, 8192, 8192, true, true},
      {kE4m3Fp16, 7168, 4096, true, true},
      // 110 blocks are 5/6 of 132 SMs, 109 fewer; 132 a wave, 133 more.
      {kUint8Fp16, 7040, 4096, true, true},
      {kUint8Fp16, 6976, 4096, false, true},
      {kUint8Fp16, 8448, 8192, true, true},
      {kUint8Fp16, 8512, 8192, false, false},
      {kUint8Fp16, 6144, 4096, false, true},
      // K from 4096 to 8192 (32 tokens from 2048).
      {kUint8Fp16, 7168, 3840, false, true},
      {kUint8Fp16, 7168, 8192, true, true},
      {kUint8Fp16, 7168, 8448, false, false},
      // The 32-token rule's spec bounds.
      {"weight=uint8,group=128,scale=fp16,act=bf16,out=bf16", 8192, 8192, false,
       false},
      {"weight=uint8,group=128,scale=fp16,zero=int,act=fp16,out=fp16", 8192,
       8192, false, false},
      {"weight=uint8,group=64,scale=fp16,act=fp16,out=fp16", 8192, 8192, false,
       false},
  };
  for (const EightBitSliceCase& c : cases) ExpectEightBitSlices(c);
}

}  // namespace
}  // namespace hummingd
