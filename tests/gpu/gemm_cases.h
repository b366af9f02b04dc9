#pragma once

// The GEMM GPU suite's cases (gemm_gpu_test.cc) and the M values each runs;
// gemm_case_grid_test.cc checks them against the planner without a GPU.

#include <cstdint>
#include <ostream>
#include <vector>

namespace hummingd::gpu::testing {

// Which M values a case runs: every range of its plan (kSmall), or, for a
// real layer, fewer (kLarge: no M past 1024) or M up to 4096.
// kDecode: the M <= 64 ranges only, at every boundary of Hopper's wgmma
// decode plan (1-8, 9-16, 17-32, 33-64).
enum GemmMSet { kSmall, kLarge, kLargeWithM4096, kDecode };

struct GemmCase {
  const char* spec;
  int64_t n;
  int64_t k;
  GemmMSet m_set;
};

void PrintTo(const GemmCase& c, std::ostream* os);

// M = 1, 7, 16, 17, 64, 100, 257, 1000 everywhere, and more per set (see
// gemm_cases.cc).
std::vector<int64_t> MValues(GemmMSet m_set);

// The covering grid (issue 4): every weight format x every scale
// granularity x every scale dtype x both 16-bit activation / output types,
// plus secondary scales, zero points and bias, each pair of options met in
// at least one case (not the full product). Shapes: the smallest legal
// (16 x 64), odd multiples of the units (48 x 192, 80 x 320, ...) and real
// layers (4096 x 4096, 6144 x 4096) for a few cases only (the fp64
// reference is the cost).
const std::vector<GemmCase>& CoveringCases();

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
// of 64 BN 256 at 8 and 16 tokens (splits of >= 8 k-tiles), k-major with
// groups narrower than a k-tile; 8-bit channel-wise 8192 x 8192 (bf16) BN 256
// at 8 tokens, whose k-major scales are the checkpoint tensor itself; 4-bit
// 1024 x 4096 with integer zero points at 8 (8 splits of 64 blocks), and
// 5120 x 4096 three per SM at 8 (320 blocks); 4-bit
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
// 32, the 8-bit 8x128x128 at 8); 4-bit 4096 x 14336 (fp16 and bf16) in
// 64-row blocks of four warps four per SM at 8 tokens (8 splits of 7 k-tiles,
// v34); scale groups of 32 on the group-128 tiles (v35: k-split warps at 8
// tokens on 4096 x 4096, here with integer zero points) and, on
// 8192 x 8192, the 64-row half tile in 4 splits at 8 tokens (v36; MXFP4
// with bf16 activations too). (Bulk (TMA) weight
// copies are no longer planned, planner v6; hummingd_gemm_bench --override
// still times them and checks their numerics.)
std::vector<GemmCase> DecodeCases();

}  // namespace hummingd::gpu::testing
