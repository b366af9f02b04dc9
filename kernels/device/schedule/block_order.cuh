#pragma once

// The order in which a GEMM's blocks take (m-block, n-block) tiles. The
// hardware starts blocks in launch order, x fastest: with the M-blocks
// along x, a wave of resident blocks of a large-M launch covers one or two
// n-blocks and every M-block, so the whole activation matrix streams from
// HBM once per wave (8192 x 8192 at M = 8192 in 256-row blocks: 134 MB,
// ~31 times per launch). Grouped order: consecutive blocks sweep kGroupN
// n-blocks of one m-block, then the same n-blocks of the next m-block, so
// a wave reads kGroupN n-blocks' weights and wave / kGroupN m-blocks'
// activations, both small enough to stay in L2 while the next wave reuses
// them. With one m-block (every decode launch) it is the identity.

#include "arch/platform.cuh"

namespace hummingd::device {

// n-blocks per group for the GEMM skeletons' large-M launches: 16 of 256
// rows (8192 x 8192, M = 8192: a wave of 132 resident blocks then reads ~8
// m-blocks' activations, 8 MB, and 16 n-blocks' 4-bit weights, 17 MB).
inline constexpr u32 kGemmBlockGroupN = 16;

struct BlockCoord {
  u32 m;
  u32 n;
};

// Block (x, y) of a grid_m x grid_n grid, launched x + grid_m * y-th.
// Exact while grid_m * grid_n < 2^32 (the 64- to 256-token tiles that
// take it stay far below: ValidateGemmTile, kernels/gemm_config.cc).
template <u32 kGroupN>
HUMMINGD_HD BlockCoord grouped_block_order(u32 x, u32 y, u32 grid_m,
                                           u32 grid_n) {
  static_assert(kGroupN >= 1, "at least one n-block per group");
  const u32 linear = x + grid_m * y;
  const u32 per_group = kGroupN * grid_m;
  const u32 group = linear / per_group;
  const u32 first_n = group * kGroupN;
  // The last group holds what is left of the n-blocks.
  const u32 group_n = grid_n - first_n < kGroupN ? grid_n - first_n : kGroupN;
  const u32 local = linear - group * per_group;
  return {local / group_n, first_n + local % group_n};
}

}  // namespace hummingd::device
