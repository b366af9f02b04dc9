#include "tests/gpu/gemm_cases.h"

#include <iterator>

namespace hummingd::gpu::testing {
namespace {

// The covering grid (CoveringCases in gemm_cases.h says what it covers).
const GemmCase kCases[] = {
    // uint1 .. uint8, symmetric (implicit mid-point).
    {"weight=uint1,group=32,scale=fp16", 16, 64, kSmall},
    {"weight=uint1,group=16,scale=fp16", 32, 128, kSmall},
    {"weight=uint1,group=channel,scale=bf16,act=bf16,out=bf16", 48, 192,
     kSmall},
    {"weight=uint2,group=64,scale=fp32", 80, 320, kSmall},
    {"weight=uint2,group=32,scale=fp16", 48, 256, kSmall},
    {"weight=uint2,group=tensor,scale=fp16,act=bf16", 64, 256, kSmall},
    {"weight=uint2,group=128,scale=e4m3,out=bf16", 128, 256, kSmall},
    {"weight=uint3,group=32,scale=bf16,act=bf16,out=bf16", 48, 192, kSmall},
    {"weight=uint3,group=64,scale=fp32,out=bf16", 80, 384, kSmall},
    {"weight=uint3,group=256,scale=fp16", 96, 512, kSmall},
    {"weight=uint3,group=128x128,scale=fp32", 256, 384, kSmall},
    {"weight=uint3,group=64,scale=e5m2,out=bf16", 80, 320, kSmall},
    {"weight=uint4,group=128,scale=fp16", 4096, 4096, kLargeWithM4096},
    // Hopper: split-K 128-token tiles, in grouped order at M = 600.
    {"weight=uint4,group=128,scale=fp16", 1024, 8192, kSmall},
    {"weight=uint4,group=128,scale=fp16", 64, 128, kSmall},
    {"weight=uint4,group=64,scale=fp16", 16, 64, kSmall},
    {"weight=uint4,group=32,scale=fp16", 16, 64, kSmall},
    {"weight=uint4,group=64,scale=bf16,act=bf16,out=bf16", 80, 320, kSmall},
    {"weight=uint4,group=256,scale=fp32,act=bf16", 128, 512, kSmall},
    {"weight=uint4,group=channel,scale=e4m3", 48, 192, kSmall},
    {"weight=uint4,group=tensor,scale=ue8m0,act=bf16,out=bf16", 64, 256,
     kSmall},
    {"weight=uint4,group=128x128,scale=bf16,act=bf16,out=bf16", 128, 256,
     kSmall},
    {"weight=uint4,group=128,scale=fp16,scale2=channel", 208, 640, kSmall},
    {"weight=uint4,group=64,scale=fp16,bias=1,scale2=channel", 160, 256,
     kSmall},
    {"weight=uint4,group=64,scale=fp16,bias=1", 16, 64, kSmall},
    {"weight=uint5,group=32,scale=fp16,act=bf16", 64, 192, kSmall},
    {"weight=uint5,group=channel,scale=fp32,out=bf16", 80, 320, kSmall},
    {"weight=uint5,group=128,scale=ue8m0", 96, 384, kSmall},
    {"weight=uint6,group=channel,scale=e4m3", 96, 256, kSmall},
    {"weight=uint6,group=64,scale=bf16,act=bf16,out=bf16", 48, 192, kSmall},
    {"weight=uint6,group=256,scale=fp16,bias=1", 112, 768, kSmall},
    {"weight=uint7,group=tensor,scale=fp32,scale2=tensor", 48, 128, kSmall},
    {"weight=uint7,group=32,scale=fp16", 16, 64, kSmall},
    {"weight=uint7,group=128,scale=bf16,act=bf16", 144, 384, kSmall},
    {"weight=uint8,group=channel,scale=fp16", 192, 320, kSmall},
    {"weight=uint8,group=128,scale=fp16,bias=1,out=bf16", 64, 512, kSmall},
    {"weight=uint8,group=32,scale=bf16,act=bf16,out=bf16", 80, 320, kSmall},
    {"weight=uint8,group=128x128,scale=fp32,act=bf16,out=bf16", 256, 512,
     kSmall},
    {"weight=uint8,group=tensor,scale=e4m3", 48, 192, kSmall},
    // uint4 / uint8 with integer zero points.
    {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16", 6144, 4096,
     kLarge},
    {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16", 208, 640,
     kSmall},
    {"weight=uint4,group=128,scale=fp16,zero=int", 4096, 4096, kLarge},
    {"weight=uint4,group=32,scale=fp16,zero=int", 16, 64, kSmall},
    {"weight=uint4,group=64,scale=fp16,zero=int,bias=1", 48, 192, kSmall},
    {"weight=uint4,group=256,scale=fp32,zero=int", 128, 512, kSmall},
    // N a multiple of 256: Hopper's 256-row 64-token tile (from M = 129,
    // where the 128-row one holds a block per SM) with integer zero points
    // and with 5-bit weights.
    {"weight=uint4,group=128,scale=fp16,zero=int", 256, 512, kSmall},
    {"weight=uint5,group=128,scale=bf16,act=bf16,out=bf16", 256, 384, kSmall},
    {"weight=uint4,group=channel,scale=fp16,zero=int,act=bf16", 80, 320,
     kSmall},
    {"weight=uint4,group=128,scale=fp16,zero=int,scale2=channel", 96, 384,
     kSmall},
    {"weight=uint4,group=128x128,scale=e4m3,zero=int", 128, 256, kSmall},
    {"weight=uint8,group=128,scale=fp16,zero=int", 64, 256, kSmall},
    {"weight=uint8,group=channel,scale=bf16,zero=int,act=bf16,out=bf16", 48,
     192, kSmall},
    {"weight=uint8,group=32,scale=fp32,zero=int,out=bf16", 80, 320, kSmall},
    {"weight=uint8,group=tensor,scale=fp16,zero=int", 16, 64, kSmall},
    // uint4 with float zero points (activation dtype).
    {"weight=uint4,group=128,scale=fp16,zero=float", 128, 256, kSmall},
    {"weight=uint4,group=32,scale=bf16,zero=float,act=bf16,out=bf16", 64, 192,
     kSmall},
    {"weight=uint4,group=64,scale=fp16,zero=float,bias=1", 80, 320, kSmall},
    {"weight=uint4,group=channel,scale=fp32,zero=float,act=bf16", 48, 192,
     kSmall},
    {"weight=uint4,group=256,scale=bf16,zero=float,act=bf16,out=bf16", 128, 512,
     kSmall},
    // Signed integers (two's complement, no offset).
    {"weight=int4,group=128,scale=fp16", 256, 512, kSmall},
    {"weight=int4,group=32,scale=bf16,act=bf16,out=bf16", 16, 64, kSmall},
    {"weight=int4,group=channel,scale=e4m3,bias=1", 80, 320, kSmall},
    {"weight=int4,group=128x128,scale=fp32", 128, 256, kSmall},
    {"weight=int4,group=64,scale=fp16,scale2=tensor", 48, 192, kSmall},
    {"weight=int8,group=channel,scale=bf16,act=bf16", 112, 192, kSmall},
    {"weight=int8,group=128,scale=fp16", 64, 256, kSmall},
    {"weight=int8,group=tensor,scale=fp32,out=bf16", 48, 192, kSmall},
    {"weight=int8,group=256,scale=ue8m0,act=bf16,out=bf16", 80, 512, kSmall},
    // fp8 weights; e5m2 only with bf16 (its range overflows fp16 sums).
    {"weight=e4m3,group=channel,scale=fp32,act=bf16,out=bf16", 128, 256,
     kSmall},
    {"weight=e4m3,group=128x128,scale=fp32", 256, 384, kSmall},
    {"weight=e4m3,group=128x128,scale=fp32,act=bf16,out=bf16", 4096, 4096,
     kLargeWithM4096},
    {"weight=e4m3,group=tensor,scale=fp32", 16, 64, kSmall},
    {"weight=e4m3,group=32,scale=ue8m0,act=bf16,out=bf16", 48, 192, kSmall},
    {"weight=e4m3,group=128,scale=bf16,act=bf16,bias=1", 80, 384, kSmall},
    // W8A16 e4m3 as issue 5 benchmarks it (fp16 scales and activations).
    {"weight=e4m3,group=128,scale=fp16", 128, 512, kSmall},
    {"weight=e5m2,group=128,scale=bf16,act=bf16,out=bf16", 64, 256, kSmall},
    {"weight=e5m2,group=channel,scale=fp32,act=bf16,out=bf16", 48, 192, kSmall},
    {"weight=e5m2,group=32,scale=ue8m0,act=bf16,out=bf16", 80, 320, kSmall},
    {"weight=e5m2,group=tensor,scale=fp32,act=bf16,out=bf16", 16, 128, kSmall},
    // fp4 / fp6 weights (MXFP4, NVFP4, MXFP6 and plain scales).
    {"weight=e2m1,group=32,scale=ue8m0,act=bf16,out=bf16", 96, 2880, kSmall},
    {"weight=e2m1,group=16,scale=e4m3,scale2=tensor", 128, 256, kSmall},
    {"weight=e2m1,group=16,scale=e4m3,scale2=tensor,act=bf16,out=bf16", 6144,
     4096, kLarge},
    {"weight=e2m1,group=32,scale=fp16", 16, 64, kSmall},
    {"weight=e2m1,group=128,scale=bf16,act=bf16,out=bf16,bias=1", 80, 384,
     kSmall},
    {"weight=e2m1,group=channel,scale=fp32", 48, 192, kSmall},
    {"weight=e3m2,group=32,scale=fp16", 48, 192, kSmall},
    {"weight=e3m2,group=128,scale=bf16,act=bf16,out=bf16", 128, 256, kSmall},
    {"weight=e3m2,group=channel,scale=e4m3,out=bf16", 16, 64, kSmall},
    {"weight=e3m2,group=64,scale=ue8m0,act=bf16,out=bf16,scale2=channel", 80,
     320, kSmall},
    {"weight=e2m3,group=32,scale=ue8m0,act=bf16,out=bf16", 64, 192, kSmall},
    {"weight=e2m3,group=256,scale=fp16", 96, 512, kSmall},
    {"weight=e2m3,group=tensor,scale=fp32,bias=1", 48, 192, kSmall},
    {"weight=e2m3,group=128x128,scale=bf16,act=bf16,out=bf16", 128, 128,
     kSmall},
};

}  // namespace

void PrintTo(const GemmCase& c, std::ostream* os) {
  *os << c.spec << " n=" << c.n << " k=" << c.k;
}

// M = 1, 7, 16, 17, 64, 100, 257, 1000 in every set but kDecode (which runs
// the decode ranges' edges only); 200, 1100 and 2100 (or
// 1100 and 4096) so that every range above 64 runs too (Hopper's merged
// steps of 64 tokens, which 160, 240, 360, 400, 600, 700 and 800 complete
// on the layers here, and the open range above 2048; elsewhere 65..256,
// 257..1024, > 1024).
std::vector<int64_t> MValues(GemmMSet m_set) {
  switch (m_set) {
    case kSmall:
      return {1,   7,   16,  17,  64,  100, 160,  200,  240,
              257, 360, 400, 600, 700, 800, 1000, 1100, 2100};
    case kLarge:
      return {1, 7, 16, 17, 64, 100, 257, 1000};
    case kLargeWithM4096:
      return {1,   7,   16,  17,  64,   100,  200, 257,
              400, 600, 700, 800, 1000, 1100, 4096};
    case kDecode:
      // 5 | 6: where planner v40 splits the 8-token range.
      return {1, 5, 6, 8, 9, 16, 17, 32, 33, 64};
  }
  return {};
}

const std::vector<GemmCase>& CoveringCases() {
  static const std::vector<GemmCase> cases(std::begin(kCases),
                                           std::end(kCases));
  return cases;
}

// Every spec of the grid again on a layer whose N is a multiple of 64, so
// that on Hopper each format also runs through the wgmma decode kernels
// (N = 64 * odd exercises the one-warpgroup tile, multiples of 128 the
// two-warpgroup one). M <= 64 only; the grid's own cases run M > 64 (on
// Hopper the 64-token wgmma tiles where N and K are multiples of 128).
// Plus real layers, where the planner picks what small layers never get:
// 4-bit 14336 x 4096 runs 256-column k-tiles in splits of 8 k-tiles at 8,
// 16 and 32 tokens (planner v16, v18: 16x128x256 four stages, 32x128x256
// three); 4-bit 6144 x 4224 (K not a multiple of 256) four 8-token blocks per
// SM and three 16-token ones (blocks=3); 8-bit 128-column k-tiles in 4
// splits at 8 tokens (v18; on uint8 10240 x 8192 since v21, where 8192 x 8192
// takes four-per-SM k-split warps); with bf16 activations (splits that long
// are bf16's limit) two 64-row blocks per warpgroup (BN 256) at 8 tokens, with
// k-major scales (groups wider than a k-tile); 4-bit 8192 x 8192 with groups
// of 64 BN 256 at 8 tokens (splits of >= 8 k-tiles), k-major with groups
// narrower than a k-tile (at 16 and 32 tokens warpgroup slices since planner
// v57, as for groups of 128 in fp16 and bf16; 4-bit 8192 x 14336 runs them
// over K > 8192, where their scale chunks are refilled); 8-bit channel-wise
// 8192 x 8192 (bf16) BN 256 at 8 tokens, whose k-major scales are the
// checkpoint tensor itself; 4-bit 1024 x 4096 with integer zero points at 8 (8
// splits of 64 blocks), and 5120 x 4096 three per SM at 8 (320 blocks); 4-bit
// 4096 x 4096 (fp16) and 6144 x 4096 (bf16), uint8 4096 x 4096 and e4m3
// 6144 x 4096 run k-split warps at 8 tokens (16- and 32-row blocks, unsplit;
// planner v19), 4-bit 8192 x 8192 too (32-row blocks on K = 8192, v20), and
// uint8 4096 x 4096 and e4m3 4096 x 4096 at 16 tokens (two m16n8k16 per
// step, v20); uint8 8192 x 8192 in 16-row blocks four per SM and e4m3
// 4096 x 14336 two per SM at 8 tokens (v21), while uint8 10240 x 8192 keeps
// the 8-bit long splits; uint8 4096 x 16384 two per SM at 8 tokens, uint8
// 4096 x 4096 with bf16 activations at 8 and 16 tokens, and e4m3 6144 x 4096
// three 16-token blocks per SM (v23); 4-bit 4096 x 4096 (fp16) 32-row
// blocks of sixteen warps one per SM at 16 tokens (v24); 4-bit and 8-bit
// 34048 x 4096, whose 266 128-row n-blocks are more than a wave of two per SM
// holds, unsplit (v26: 256-row k-major tiles at 8 and 16 tokens, 32x128x256 at
// 32, the 8-bit 8x128x128 at 8); 4-bit 3584 x 14336 (bf16; 4096 x 14336
// until planners v55 / v56 gave it 16-row k-split blocks, fp16 and bf16) in
// 64-row blocks of four warps four per SM at 8 tokens (9 splits of 6-7
// k-tiles, v34); scale groups of 32 on the group-128 tiles (v35: k-split warps
// at 8 tokens on 4096 x 4096, here with integer zero points) and, on 8192 x
// 8192, the 64-row half tile in 4 splits at 8 tokens (v36; MXFP4 with bf16
// activations too). Planner v40-v42's early=1 splits: uint8 and e4m3 4096 x
// 4096 and 4-bit 6144 x 4096 (fp16) plan M = 1-5 and 6-8 as two entries of one
// k-split tile, uint8 4096 x 2048 takes it over the whole 8-token range, and
// uint8 / e4m3 4096 x 4096 on the 64-token pre-scaled tile. Planner v43's
// weight copy paths: 4-bit 2048 x 28672 (fp16; 4096 x 14336 until planner v55
// gave it 16-row k-split blocks) copies the half tile's weights by
// cp.async.bulk at 8 tokens, and 4-bit 8192 x 8192 with bf16 activations takes
// warp-run weight slots (copy=warprun) on its k-split tile (hummingd_gemm_bench
// --override times either on any tile and checks their numerics). Planner v46's
// 64-row one-warpgroup blocks three per SM: 4-bit 6144 x 4096 (fp16 and bf16)
// at 16 tokens (16x64x256 in 4 splits) and 32 (32x64x128 in 4), 5120 x 4096 at
// 16 (since planner v60 both take warpgroup k-slices at 16 and 32 tokens
// instead, as do 6144 x 2048 at 16, where the slices' four k-tiles fill the
// ring, and 7168 x 4096 with bf16 activations; v61 gives the 32-token slices
// on 8192 x 8192 k-major scales, and 8192 x 28672 its 16-token 128-row tile
// in 4 splits and its 32-token slices over 56 k-tiles).
std::vector<GemmCase> DecodeCases() {
  std::vector<GemmCase> cases;
  for (const GemmCase& c : CoveringCases()) {
    if (c.m_set != kSmall) continue;
    int64_t n = c.n;
    while (n % 64 != 0) n *= 2;
    cases.push_back(GemmCase{c.spec, n, c.k, kDecode});
  }
  // The real layers of the comment above.
  const GemmCase kRealLayers[] = {
      {"weight=uint4,group=128,scale=fp16", 14336, 4096, kDecode},
      {"weight=uint4,group=128,scale=fp16", 6144, 4224, kDecode},
      {"weight=uint8,group=128,scale=fp16", 8192, 8192, kDecode},
      {"weight=uint8,group=128,scale=bf16,act=bf16,out=bf16", 8192, 8192,
       kDecode},
      {"weight=uint4,group=64,scale=fp16", 8192, 8192, kDecode},
      {"weight=uint8,group=channel,scale=bf16,act=bf16,out=bf16", 8192, 8192,
       kDecode},
      {"weight=uint4,group=128,scale=fp16", 4096, 4096, kDecode},
      {"weight=uint8,group=128,scale=fp16", 4096, 4096, kDecode},
      {"weight=e4m3,group=128,scale=fp16", 6144, 4096, kDecode},
      {"weight=uint4,group=128,scale=fp16", 5120, 4096, kDecode},
      {"weight=uint4,group=128,scale=fp16", 8192, 8192, kDecode},
      {"weight=uint8,group=128,scale=fp16", 10240, 8192, kDecode},
      {"weight=e4m3,group=128,scale=fp16", 4096, 14336, kDecode},
      {"weight=e4m3,group=128,scale=fp16", 4096, 4096, kDecode},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 6144, 4096,
       kDecode},
      {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16", 1024,
       4096, kDecode},
      {"weight=uint8,group=128,scale=fp16", 4096, 16384, kDecode},
      {"weight=uint8,group=128,scale=bf16,act=bf16,out=bf16", 4096, 4096,
       kDecode},
      {"weight=uint4,group=128,scale=fp16", 34048, 4096, kDecode},
      {"weight=uint8,group=128,scale=fp16", 34048, 4096, kDecode},
      {"weight=uint4,group=128,scale=fp16", 4096, 14336, kDecode},
      {"weight=uint4,group=128,scale=fp16", 2048, 28672, kDecode},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 4096, 14336,
       kDecode},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 3584, 14336,
       kDecode},
      {"weight=uint4,group=32,scale=fp16", 8192, 8192, kDecode},
      {"weight=uint4,group=32,scale=fp16,zero=int", 4096, 4096, kDecode},
      // Planner v74: uint8 zero points' pre-scaled half tile at 64 tokens.
      {"weight=uint8,group=128,scale=fp16,zero=int", 4096, 4096, kDecode},
      {"weight=e2m1,group=32,scale=ue8m0,act=bf16,out=bf16", 8192, 8192,
       kDecode},
      {"weight=uint4,group=128,scale=fp16", 6144, 4096, kDecode},
      {"weight=uint8,group=128,scale=fp16", 4096, 2048, kDecode},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 8192, 8192,
       kDecode},
      {"weight=uint4,group=128,scale=fp16", 8192, 14336, kDecode},
      {"weight=uint4,group=128,scale=fp16", 6144, 2048, kDecode},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 7168, 4096,
       kDecode},
      {"weight=uint4,group=128,scale=fp16", 8192, 28672, kDecode},
  };
  cases.insert(cases.end(), std::begin(kRealLayers), std::end(kRealLayers));
  return cases;
}

}  // namespace hummingd::gpu::testing
