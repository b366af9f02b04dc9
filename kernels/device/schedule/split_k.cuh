#pragma once

// Split-K work division: split z of Z takes k-tiles [z T / Z, (z+1) T / Z),
// so every split gets floor or ceil of T / Z tiles. With Z > 1 a launch
// needs two caller buffers (sizes: kernels/gemm_config.h):
//  - the workspace: per m-block, Z x (N / BN) partial tiles of BM x BN fp32
//    values; any contents, nothing to initialise;
//  - the arrival counters: one u32 per (m16, n16) tile origin, i.e.
//    ceil(M / 16) x (N / 16) words (an 8-row block counts as 16), zeroed once
//    at allocation. The tile at (block_m, block_n) counts at the index of its
//    first m16 row and n16 column, so every config of a plan (and every M up to
//    the allocation) uses disjoint or identical counters, and each launch
//    leaves the ones it used at zero again: one zeroed counter buffer serves
//    all launches on a stream.

#include "arch/platform.cuh"

namespace hummingd::device {

struct KTileRange {
  int begin;
  int end;
};

HUMMINGD_HD KTileRange split_k_range(int k_tiles, int split, int splits) {
  return {static_cast<int>(static_cast<i64>(k_tiles) * split / splits),
          static_cast<int>(static_cast<i64>(k_tiles) * (split + 1) / splits)};
}

// Workspace floats of one m-block.
HUMMINGD_HD i64 split_k_block_floats(i64 n_blocks, i64 splits, i64 tile_elems) {
  return splits * n_blocks * tile_elems;
}

// Counter of the tile at (block_m, block_n) for BM x BN tiles of an N-wide
// output.
HUMMINGD_HD i64 split_k_counter_index(i64 block_m, i64 block_n, int block_rows,
                                      int block_cols, i64 n) {
  return block_m * ((block_rows + 15) / 16) * (n / 16) +
         block_n * (block_cols / 16);
}

}  // namespace hummingd::device
