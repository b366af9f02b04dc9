#pragma once

// Coalesced stores of per-lane rows: each lane of a warp holds one 64-byte
// row (16 words) of a contiguous 2 KB warp tile. Stored directly, every
// 16-byte store instruction would scatter over the whole 2 KB; staged through
// shared memory, store round r writes bytes [512 r, 512 (r + 1)) of the tile
// in one contiguous warp-wide access.
//
// The stage is 32 rows x 4 quarters of 16 bytes. Quarter q of row l sits in
// cell l*4 + (q ^ ((l >> 1) & 3)): within every 8-lane phase of a 16-byte
// access, both the writes (fixed q) and the reads (rows 2p, 2p+1, all q) hit
// 8 different 16-byte bank groups, so neither side has bank conflicts.

#include "arch/global_memory.cuh"
#include "arch/platform.cuh"
#include "arch/shared_memory.cuh"

namespace hummingd::device {

inline constexpr int kStageRowWords = 16;  // 64 bytes per lane
inline constexpr int kStageWords = 32 * kStageRowWords;

HUMMINGD_HD int stage_cell(int row, int quarter) {
  return row * 4 + (quarter ^ ((row >> 1) & 3));
}

// In store round `round` (0..3) lane `lane` writes the tile's 16-byte
// segment round*32 + lane, which is this quarter of this row:
HUMMINGD_HD int stage_source_row(int round, int lane) {
  return (round * 32 + lane) >> 2;
}
HUMMINGD_HD int stage_source_quarter(int lane) { return lane & 3; }

#if defined(__CUDA_ARCH__)

// g_tile: the warp's (32, 16)-word output tile; rows >= valid_rows (a
// partial last warp) are not written. Every lane of the warp must call.
HUMMINGD_DEVICE void store_rows_staged(u32* g_tile,
                                       const u32 (&r_row)[kStageRowWords],
                                       u32* s_stage, int lane, int valid_rows) {
  HUMMINGD_UNROLL
  for (int q = 0; q < 4; ++q) {
    store_shared_v4(s_stage + stage_cell(lane, q) * 4, r_row + q * 4);
  }
  warp_sync();
  HUMMINGD_UNROLL
  for (int round = 0; round < 4; ++round) {
    const int row = stage_source_row(round, lane);
    if (row < valid_rows) {
      u32 r_segment[4];  // (4) one 16-byte segment
      load_shared_v4(s_stage + stage_cell(row, stage_source_quarter(lane)) * 4,
                     r_segment);
      store_global_v4(g_tile + (round * 32 + lane) * 4, r_segment);
    }
  }
  warp_sync();  // the stage may be reused after this returns
}

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
