#pragma once

// Stream-K work division: `workers` blocks share the (n-block, k-tile) space
// of a layer evenly, so a layer whose n-blocks do not fill the block slots
// (28672 x 8192 in 128-row blocks: 224 on 264 slots) still keeps every slot
// busy to the end. The space is cut into units of `unit_tiles` consecutive
// k-tiles of one n-block (n-block major: n-block b holds units
// b * tile_units .. (b + 1) * tile_units - 1); worker w takes units
// [w U / W, (w + 1) U / W) of the U = n_blocks * tile_units, i.e. floor or
// ceil of U / W of them. Its run crosses n-blocks where it must: each piece
// inside one n-block is a segment, and the workers that share an n-block meet
// in split-K partials (epilogue/gemm_epilogue.cuh's split_k_reduce, with the
// worker's place among the n-block's workers as its split). Host and device
// (the planner sizes the workspace with stream_k_slots).

#include "arch/platform.cuh"

namespace hummingd::device {

// The first unit of worker w.
HUMMINGD_HD i64 stream_k_unit_begin(i64 units, int workers, int w) {
  return units * w / workers;
}

// The worker whose units hold unit u: the largest w with
// stream_k_unit_begin(w) <= u.
HUMMINGD_HD int stream_k_worker_of(i64 unit, i64 units, int workers) {
  return static_cast<int>(((unit + 1) * workers - 1) / units);
}

// Partial slots one n-block of tile_units units may need: at most this many
// workers share it when every worker takes at least floor(U / W) >= 1 units
// (the interior ones lie wholly inside it). The workspace holds this many
// partials per n-block (and m-block), as split-K holds `splits`.
HUMMINGD_HD int stream_k_slots(i64 tile_units, i64 units, int workers) {
  const i64 least = units / workers;
  if (least < 1 || tile_units <= 1) return tile_units <= 1 ? 1 : workers;
  const i64 bound = (tile_units - 2) / least + 2;
  return static_cast<int>(bound < workers ? bound : workers);
}

// Worker w's run: `tiles` k-tiles from k-tile k_tile0 of n-block n_block on,
// through the following n-blocks from their first k-tile (n-block n_block's
// part ends after min(tiles, k_tiles - k_tile0) of them).
struct StreamKRun {
  int tiles;
  i64 n_block;
  int k_tile0;
};

HUMMINGD_HD StreamKRun stream_k_run(i64 units, int workers, int w,
                                    int tile_units, int unit_tiles) {
  const i64 unit0 = stream_k_unit_begin(units, workers, w);
  const i64 unit1 = stream_k_unit_begin(units, workers, w + 1);
  return {static_cast<int>((unit1 - unit0) * unit_tiles), unit0 / tile_units,
          static_cast<int>(unit0 % tile_units) * unit_tiles};
}

// Consecutive k-tiles of a unit: the smallest divisor of k_tiles that is at
// least `lead` (the copy ring's lead), so that every segment holds whole
// units and so at least `lead` tiles: the ring never runs past a segment it
// has not started, and the scale chunks stay in three buffers
// (gemm/wgmma_gemm.cuh).
HUMMINGD_HD constexpr int stream_k_unit_tiles(int k_tiles, int lead) {
  int d = lead > 1 ? lead : 1;
  while (d < k_tiles && k_tiles % d != 0) ++d;
  return d < k_tiles ? d : k_tiles;
}

}  // namespace hummingd::device
