#pragma once

// Hopper decode GEMM skeleton (sm_90a): Y (M x N) = X (M x K) . W^T for
// the small M of token generation, computed as Y^T = W . X^T so that the
// weights fill wgmma's 64-row A operand and the few tokens its N (8..64).
// A k-tile moves global -> shared (activations in the swizzled K-major
// layout wgmma reads by cp.async, weight units by cp.async or bulk copies)
// through a kStages-deep ring; tile t + kStages - 2 is copied while tile t
// computes (not t + kStages - 1: the wgmma of tile t - 1 may still read its
// slot; at 8 tokens, on mma.sync, nothing does after the tile's barrier,
// but the ring keeps one rule: bench/decode-notes.md "What to try next").
// Scales and zero points arrive per chunk of k-tiles into two buffers after the
// ring, each chunk with its first tile's copy. Each warp decodes its own 16
// weight rows straight into A registers (gemm/wgmma_tile_compute.cuh, which
// also applies the scales). Split-K partials meet in the epilogue as in the
// mma.sync skeleton. With k-split warps (Tile::kWarpSplitK > 1: 8 / 16
// tokens on mma.sync, or whole warpgroups on wgmma at 16 / 32 tokens with
// BN 64) each warp computes one n-unit's k-slice of every tile and the
// slices meet in shared memory before the store; such tiles run unsplit.

#include "arch/async_copy.cuh"
#include "arch/bulk_copy.cuh"
#include "arch/platform.cuh"
#include "arch/shared_memory.cuh"
#include "arch/wgmma.cuh"
#include "epilogue/gemm_epilogue.cuh"
#include "gemm/wgmma_config.cuh"
#include "gemm/wgmma_tile_compute.cuh"
#include "gemm/wna16_args.cuh"
#include "memory/wgmma_tiles.cuh"
#include "schedule/block_order.cuh"
#include "schedule/split_k.cuh"

namespace hummingd::device {

#if defined(HUMMINGD_HAS_WGMMA)

// k-split warps: adds the other k-slices' accumulators of the warp's n-unit
// to the slice-0 warp's, through the ring (every tile has been read and
// every copy has landed). Returns whether the warp holds the block's sums
// (slice 0), which then stores them. Every thread of the block calls it.
template <class Config>
HUMMINGD_DEVICE bool sum_warp_k_slices(float (&r_sum)[Config::kAccumulators],
                                       u32 s_ring, int warp, int lane) {
  // One m16n8 fragment (4 floats) per n8 tile of the warp's tokens.
  constexpr int kQuads = Config::kAccumulators / 4;
  static_assert(Config::kRowBlocks == 1 && Config::kAccumulators % 4 == 0,
                "whole m16n8 fragments of one n-unit per warp");
  static_assert(
      (Config::kWarpSplitK - 1) * Config::kRowUnits * 32 * kQuads * 16 <=
          Config::Tile::kStages * Config::kStageBytes,
      "the other slices' sums fit the ring");
  const int slice = Config::warp_k_slice(warp);
  const int unit = Config::warp_row_unit(warp, 0);
  // (slice - 1, unit, lane, quad) -> 16 bytes.
  auto slot = [&](int from_slice, int quad) {
    return s_ring +
           static_cast<u32>(
               ((((from_slice - 1) * Config::kRowUnits + unit) * 32 + lane) *
                    kQuads +
                quad) *
               16);
  };
  __syncthreads();
  if (slice > 0) {
    HUMMINGD_UNROLL
    for (int q = 0; q < kQuads; ++q) {
      store_shared_f32x4(slot(slice, q), r_sum[4 * q], r_sum[4 * q + 1],
                         r_sum[4 * q + 2], r_sum[4 * q + 3]);
    }
  }
  __syncthreads();
  if (slice > 0) return false;
  HUMMINGD_UNROLL
  for (int from = 1; from < Config::kWarpSplitK; ++from) {
    HUMMINGD_UNROLL
    for (int q = 0; q < kQuads; ++q) {
      float part[4];
      load_shared_f32x4(slot(from, q), part);
      HUMMINGD_UNROLL
      for (int i = 0; i < 4; ++i) r_sum[4 * q + i] += part[i];
    }
  }
  return true;
}

template <class Config>
HUMMINGD_DEVICE void run_wgmma_gemm(const GemmArgs& args, u32 thread,
                                    u32 block_m, u32 block_n, u32 split,
                                    u32 splits) {
  using Tile = typename Config::Tile;
  using Format = typename Config::Format;
  constexpr int kR = Config::kRowBlocks;
  constexpr int kT = Config::kTokens;
  extern __shared__ __align__(16) u8 s_dynamic[];
  const int lane = static_cast<int>(thread & 31u);
  // Warpgroup slices build their wgmma descriptors from the warp's k-slice.
  const int warp = Config::kWarpgroupSlices
                       ? warp_uniform(static_cast<int>(thread >> 5))
                       : static_cast<int>(thread >> 5);
  const i64 m = args.m;
  const i64 m0 = static_cast<i64>(block_m) * kT;
  const i64 n0 = static_cast<i64>(block_n) * Tile::kBlockN;
  // k-split warp tiles run unsplit (a split launch traps below); most take
  // their tile count as a compile-time constant (Config::kCompileTimeKTiles).
  const KTileRange range = Config::kCompileTimeKTiles
                               ? KTileRange{0, Config::kKTiles}
                               : split_k_range(Config::kKTiles, split, splits);
  const int tiles = range.end - range.begin;
  // wgmma's swizzle atoms must be 1024-byte aligned; the launch reserves
  // the slack (wgmma_shared_bytes). Kept in a register: rebuilt from
  // %cgactaid at each use it cost ~24 instructions per k-tile (nvdisasm),
  // and pinned it measured 0.96-0.99x on the 8- to 64-token tiles; not on
  // pre-scaled tiles, where it measured 1.025x twice (bench/decode-notes.md
  // v38, v40, v41).
  const u32 s_aligned =
      (shared_address_of(s_dynamic) + (kWgmmaSharedAlign - 1)) &
      ~static_cast<u32>(kWgmmaSharedAlign - 1);
  const u32 s_base = Tile::kPrescaled ? s_aligned : opaque_register(s_aligned);
  HUMMINGD_TIMELINE_MARK(thread, 0);  // entry
  WgmmaAccumulators<Config> acc;
  acc.clear();
  float(&r_acc)[kR][kT / 2] = acc.total;

  // After the ring: the two scale chunk buffers, then one mbarrier per stage
  // (bulk weights: the stage's weight copies complete on it, once per use
  // of the slot).
  const u32 s_chunks = s_base + Tile::kStages * Config::kStageBytes;
  const u32 s_barriers = s_chunks + 2 * Config::kChunkBytes;
  // Ring slot `slot`'s stage and its mbarrier.
  auto stage_at = [&](int slot) { return s_base + slot * Config::kStageBytes; };
  // A slot's wgmma descriptor. Where a pass is unrolled over the ring's
  // slots (compile-time slots) it is the ring's plus the slot's offset in
  // 16-byte units (the start address field holds addresses below 256 KB,
  // so the sum never carries out of it): built once, not from each tile's
  // stage address (five uniform instructions a tile; nvdisasm: 6-9 fewer
  // per pass). With a runtime slot the 64-bit sum cost 1-4 more a tile than
  // the stage address's own descriptor.
  static_assert(Config::kSharedBytes < (1 << 18),
                "every ring address lies in the block's shared memory, below "
                "256 KB: the descriptors' start field never carries");
  const u64 desc_ring = wgmma_descriptor_k_major_sw128(s_base);
  auto desc_at = [&](int slot) {
    return Config::kTilesPerPass > 1
               ? desc_ring + static_cast<u64>(slot * (Config::kStageBytes >> 4))
               : wgmma_descriptor_k_major_sw128(stage_at(slot));
  };
  auto barrier_at = [&](int slot) { return s_barriers + slot * 8; };
  // Chunk c of the split (tiles c * kChunkTiles ..) lives in buffer c % 2.
  constexpr int kChunkTiles = Config::kChunkTiles;
  auto chunk_buffer = [&](int chunk) {
    return s_chunks + (chunk & 1) * Config::kChunkBytes;
  };
  if constexpr (Tile::kBulkWeights) {
    if (thread == 0) {
      HUMMINGD_UNROLL
      for (int slot = 0; slot < Tile::kStages; ++slot) {
        mbarrier_init(barrier_at(slot), 1);
      }
      mbarrier_init_fence();
    }
    __syncthreads();
  }

  const WgmmaStageCopier<Config> copier(args, m0, n0, range.begin,
                                        static_cast<int>(thread));

  // Programmatic dependent launch: let the next kernel on the stream be
  // scheduled now; its blocks take SMs as ours retire.
  grid_dependents_launch();

  // Tile t + kAhead is copied while tile t computes (kAhead = kStages - 2,
  // or 2 for three-stage k-split warp tiles: wgmma_ring_lead; all of K
  // where it fits the ring, Config::kWholeKInRing, so no tile is copied
  // in the loop and no slot is refilled): the slot it
  // lands in was last read by tile t + kAhead - kStages, t - 2, whose wgmmas
  // every warp has retired (wait_group 1 or 2 inside tile t - 1,
  // kGroupsInFlight and the step pairs in gemm/wgmma_tile_compute.cuh)
  // before this barrier; or t - 1 on three-stage k-split warp tiles, whose
  // mma.sync reads are done when a warp reaches it (on slice-ring tiles the
  // slice's barrier: only the slice's warps read or refill its part of the
  // slot).
  // The prologue fetches the weights of its first Config::kEarlyTiles tiles
  // (all kAhead unless the tile says `early=N`) before waiting for the
  // previous kernel (they are read-only), and the rest after: per tile its
  // activations (and weights, past the early ones), one cp.async group per
  // tile. Tile t's activations complete with group t + kEarlyTiles (t +
  // kAhead - 1 where every prologue tile is early: the last early weights
  // join tile 0's group), so every tile, the first among them, waits for
  // all but the kAhead - 1 newest groups, and the first tile starts without
  // the later prologue tiles' activations. Fewer early tiles let the first
  // tile's activations in ahead of the later tiles' weights
  // (bench/decode-notes.md v82, v83).
  constexpr int kAhead = Config::kAhead;
  constexpr int kEarlyTiles = Config::kEarlyTiles;
  static_assert(kAhead < Tile::kStages || Config::kWholeKInRing,
                "the prologue's tiles sit in slots (all of K: one slot each)");
  // Chunk 0's scales (read-only) travel with tile 0; kChunkTiles >= kAhead,
  // so no other chunk starts inside the prologue.
  if (tiles > 0) copier.copy_chunk(chunk_buffer(0), range.begin);
  HUMMINGD_UNROLL
  for (int t = 0; t < kEarlyTiles; ++t) {
    if (t < tiles) {
      // Tile t < kAhead <= kStages sits in slot t.
      copier.copy_weights(stage_at(t), barrier_at(t), t, range.begin);
    }
    if (t + 1 < kEarlyTiles || kEarlyTiles < kAhead) async_copy_commit();
  }
  grid_dependency_wait();
  HUMMINGD_TIMELINE_MARK(thread, 1);  // the previous kernel is complete
  HUMMINGD_UNROLL
  for (int t = 0; t < kAhead; ++t) {
    if (t < tiles) {
      if (t >= kEarlyTiles) {
        copier.copy_weights(stage_at(t), barrier_at(t), t, range.begin);
      }
      copier.copy_activations(stage_at(t), t);
    }
    async_copy_commit();
  }
  // Waits until tile t, in ring slot `slot`, has landed (its cp.async
  // group and, with bulk weights, its mbarrier phase), then issues tile
  // t + kAhead's copy into ring slot copy_slot.
  auto begin_tile = [&](int slot, int copy_slot, int t) {
    async_copy_wait<kAhead - 1>();
    if constexpr (Tile::kBulkWeights) {
      mbarrier_wait_parity(barrier_at(slot),
                           static_cast<u32>(t / Tile::kStages) & 1u);
    }
    if constexpr (WgmmaStageCopier<Config>::kSliceRings) {
      // Slice rings: a k-slice's warps read only what their own lanes copied
      // (and rewrite only what they read), so the slice meets itself, and
      // the block meets where a scale chunk c begins: chunk c has landed
      // for every warp (its copy is spread over the block), and every warp
      // is past chunk c - 1's tiles, whose buffer the copy of chunk c + 1
      // refills at or after this barrier (kChunkTiles >= kAhead).
      if (t % kChunkTiles == 0) {
        __syncthreads();
      } else {
        copier.slice_sync();
      }
    } else {
      __syncthreads();
    }
    if (t + kAhead < tiles) {
      copier.copy(stage_at(copy_slot), barrier_at(copy_slot), t + kAhead,
                  range.begin);
      // A chunk lands with its first tile. Its buffer last held chunk
      // c - 2, whose tiles all ended before tile t (kChunkTiles >= kAhead)
      // and so before the barrier above (slice rings: before the block
      // barrier where chunk c - 1 began, at or before tile t).
      if ((t + kAhead) % kChunkTiles == 0) {
        copier.copy_chunk(chunk_buffer((t + kAhead) / kChunkTiles),
                          range.begin + t + kAhead);
      }
    }
    async_copy_commit();
  };
  auto k_of_tile = [&](int t) { return (range.begin + t) * Tile::kBlockK; };
  // The thread's rows' addresses in the current chunk, rebuilt as each
  // chunk begins (t = 0 first).
  WgmmaChunk<Config> chunk;
  const WgmmaLaneOffsets<Config> lanes = wgmma_lane_offsets<Config>(warp, lane);
  // Config::kTilesPerPass tiles per pass: where that is kStages, the pass
  // is unrolled one tile per ring slot, so that every slot address (the
  // stage a tile reads, the one its copy fills) is s_base plus a
  // compile-time offset: no slot index or address arithmetic per tile,
  // 0.92-1.01x the time of one tile per pass (bench/decode-notes.md v70).
  constexpr int kTilesPerPass = Config::kTilesPerPass;
  for (int t0 = 0; t0 < tiles; t0 += kTilesPerPass) {
    HUMMINGD_UNROLL
    for (int i = 0; i < kTilesPerPass; ++i) {
      const int t = t0 + i;
      if (t >= tiles) break;
      const int slot = kTilesPerPass == 1 ? t % Tile::kStages : i;
      const int copy_slot = kTilesPerPass == 1 ? (t + kAhead) % Tile::kStages
                                               : (i + kAhead) % Tile::kStages;
      begin_tile(slot, copy_slot, t);
      if (t == 0) HUMMINGD_TIMELINE_MARK(thread, 2);          // first tile in
      if (t == tiles - 1) HUMMINGD_TIMELINE_MARK(thread, 3);  // last tile in
      if (t % kChunkTiles == 0) {
        chunk = wgmma_chunk_view<Config>(chunk_buffer(t / kChunkTiles),
                                         range.begin + t, n0, warp, lane);
      }
      wgmma_compute_tile<Config>(acc, stage_at(slot), desc_at(slot), chunk,
                                 k_of_tile(t), t > 0, warp, lane, lanes);
    }
  }
  wgmma_wait<0>();
  async_copy_wait<0>();
  // The last period's partial sums.
  if constexpr (WgmmaScalePlan<Config>::kDeferred) {
    if (tiles > 0) acc.fold();
  }
  HUMMINGD_UNROLL
  for (int r = 0; r < kR; ++r) {
    HUMMINGD_UNROLL
    for (int i = 0; i < kT / 2; ++i) wgmma_fence_operand(r_acc[r][i]);
  }
  HUMMINGD_TIMELINE_MARK(thread, 4);  // accumulators final

  if constexpr (Config::kWarpSplitK > 1) {
    // The planner never splits these (kernels/gemm_decode_plan.cc); a
    // launch that did would lose the other splits' sums (or, with a
    // compile-time k-tile count, compute all of K in every split).
    if (splits > 1) __trap();
    if (!sum_warp_k_slices<Config>(r_acc[0], s_base, warp, lane)) return;
  } else if (splits > 1) {
    float(&r_flat)[Config::kAccumulators] =
        reinterpret_cast<float(&)[Config::kAccumulators]>(r_acc);
    const bool last =
        reduce_split_k_tile<Config::kThreads, kT, Tile::kBlockN, Config::kN>(
            r_flat, args.workspace, args.split_counters, block_m, block_n,
            split, splits, thread);
    HUMMINGD_TIMELINE_MARK(thread, 5);  // split-K arrival (and sum) done
    if (!last) return;
  }

  const int g = lane >> 2;
  const int t4 = lane & 3;
  HUMMINGD_UNROLL
  for (int r = 0; r < kR; ++r) {
    const i64 col0 = n0 + Config::warp_row_unit(warp, r) * 16 + g;
    HUMMINGD_UNROLL
    for (int i = 0; i < kT / 8; ++i) {
      HUMMINGD_UNROLL
      for (int e = 0; e < 4; ++e) {
        const i64 row = m0 + 8 * i + 2 * t4 + (e & 1);
        const i64 col = col0 + 8 * (e >> 1);
        store_output_element<Format, Config::kN>(args.y, args.secondary_scale,
                                                 args.bias, m, row, col,
                                                 r_acc[r][4 * i + e]);
      }
    }
  }
  HUMMINGD_TIMELINE_MARK(thread, 6);  // output stored
}

#endif  // HUMMINGD_HAS_WGMMA

}  // namespace hummingd::device
