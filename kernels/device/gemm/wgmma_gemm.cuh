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
// mma.sync skeleton. With k-split warps (Tile::kWarpSplitK > 1, 8 tokens)
// each warp computes one n-unit's k-slice of every tile and the slices meet
// in shared memory before the store; such tiles run unsplit.
// Stream-K tiles (Tile::kStreamK) take the launch's z blocks as workers
// over every n-block (schedule/stream_k.cuh): a worker's k-tiles run
// through one ring across the n-blocks it touches (segments), and at the
// end of each segment its sums go to the output or meet the other workers'
// partials of that n-block, while the next segment's copies are in flight.

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
#include "schedule/split_k.cuh"
#include "schedule/stream_k.cuh"

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

// The k-tiles of one n-block that a block computes in one go: the block's
// split (split-K: the whole run) or one segment of a stream-K worker's run.
// `first` and `end` count the block's tiles (0 .. tiles), k_tile0 is the
// n-block's k-tile at `first`, n0 the n-block's first output column.
struct WgmmaSegment {
  i64 n0;
  int k_tile0;
  int first;
  int end;
};

// The segment after `segment` in a stream-K worker's run of `tiles` tiles:
// the next n-block from its first k-tile.
template <class Config>
HUMMINGD_DEVICE WgmmaSegment next_wgmma_segment(const WgmmaSegment& segment,
                                                int tiles) {
  const int end = segment.end + Config::kKTiles;
  return {segment.n0 + Config::Tile::kBlockN, 0, segment.end,
          end < tiles ? end : tiles};
}

// The block's k-tiles and their first segment.
struct WgmmaRun {
  int tiles;
  WgmmaSegment first;
};

template <class Config>
HUMMINGD_DEVICE WgmmaRun wgmma_block_run(u32 block_n, u32 split, u32 splits,
                                         i64 tile_units, i64 units) {
  using Tile = typename Config::Tile;
  if constexpr (Tile::kStreamK) {
    // Every worker needs a unit: with more workers than units, one whose
    // run is empty would be counted in an n-block that it never reaches.
    if (static_cast<i64>(splits) > units) __trap();
    const StreamKRun run =
        stream_k_run(units, static_cast<int>(splits), static_cast<int>(split),
                     static_cast<int>(tile_units), Config::kStreamKUnitTiles);
    const int end = Config::kKTiles - run.k_tile0;
    return {run.tiles,
            {run.n_block * Tile::kBlockN, run.k_tile0, 0,
             end < run.tiles ? end : run.tiles}};
  } else {
    const KTileRange range = split_k_range(Config::kKTiles, split, splits);
    const int tiles = range.end - range.begin;
    return {tiles,
            {static_cast<i64>(block_n) * Tile::kBlockN, range.begin, 0, tiles}};
  }
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
  const int warp = static_cast<int>(thread >> 5);
  const i64 m = args.m;
  const i64 m0 = static_cast<i64>(block_m) * kT;
  // The block's run of k-tiles and its first segment.
  constexpr i64 kNBlocks = Config::kN / Tile::kBlockN;
  constexpr i64 kTileUnits = Config::kStreamKTileUnits;
  const i64 units = kNBlocks * kTileUnits;
  const WgmmaRun run =
      wgmma_block_run<Config>(block_n, split, splits, kTileUnits, units);
  const int tiles = run.tiles;
  const WgmmaSegment first_segment = run.first;
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
  auto stage_of = [&](int tile) {
    return s_base + (tile % Tile::kStages) * Config::kStageBytes;
  };
  auto barrier_of = [&](int tile) {
    return s_barriers + (tile % Tile::kStages) * 8;
  };
  // Chunk c of a segment starts at its tile c * kChunkTiles. Split-K: the
  // split's chunk c lives in buffer c % 2. Stream-K: the chunks of the
  // worker's run take three buffers in turn (a segment's last chunk may be
  // shorter than the ring's lead, but any two consecutive chunks span at
  // least the lead: segments hold whole units), counted separately by the
  // copies and by the compute.
  constexpr int kChunkTiles = Config::kChunkTiles;
  auto chunk_buffer = [&](int chunk) {
    return s_chunks + (chunk & 1) * Config::kChunkBytes;
  };
  auto next_buffer = [](int buffer) {
    return buffer == Config::kChunkBuffers - 1 ? 0 : buffer + 1;
  };
  if constexpr (Tile::kBulkWeights) {
    if (thread == 0) {
      HUMMINGD_UNROLL
      for (int slot = 0; slot < Tile::kStages; ++slot) {
        mbarrier_init(s_barriers + slot * 8, 1);
      }
      mbarrier_init_fence();
    }
    __syncthreads();
  }

  // Addresses of the first segment's first tile; a stream-K segment past
  // it copies at the offsets of its n-block and k-tile from there.
  const WgmmaStageCopier<Config> copier(args, m0, first_segment.n0,
                                        first_segment.k_tile0,
                                        static_cast<int>(thread));
  WgmmaSegment copy_segment = first_segment;
  int copy_buffer = 0;

  // Programmatic dependent launch: let the next kernel on the stream be
  // scheduled now; its blocks take SMs as ours retire.
  grid_dependents_launch();

  // Tile t + kStages - 2 is copied while tile t computes: the slot it
  // lands in was last read by tile t - 2, whose wgmmas every warp has
  // retired (wait_group 1 inside tile t - 1) before this barrier.
  // The prologue fetches the weights of the first tiles before waiting for
  // the previous kernel (they are read-only), and the activations after:
  // all of those activations go into the last prologue group, so the first
  // iteration waits for the whole prologue.
  // (kStages - 1 for k-split warp tiles: Config::kAhead, wgmma_ring_lead.)
  constexpr int kAhead = Config::kAhead;
  // Chunk 0's scales (read-only) travel with tile 0; kChunkTiles >= kAhead,
  // so no other chunk starts inside the prologue (nor a segment: a segment
  // holds at least kAhead tiles).
  if (tiles > 0) copier.copy_chunk(chunk_buffer(0), first_segment.k_tile0);
  HUMMINGD_UNROLL
  for (int t = 0; t < kAhead; ++t) {
    if (t < tiles) {
      copier.copy_weights(stage_of(t), barrier_of(t), t, first_segment.k_tile0);
    }
    if (t + 1 < kAhead) async_copy_commit();
  }
  grid_dependency_wait();
  HUMMINGD_TIMELINE_MARK(thread, 1);  // the previous kernel is complete
  HUMMINGD_UNROLL
  for (int t = 0; t < kAhead; ++t) {
    if (t < tiles) copier.copy_activations(stage_of(t), t);
  }
  async_copy_commit();
  // Stream-K: issues tile t's copies (and its chunk's, at a chunk's first
  // tile) from the segment that holds it. The activations depend on the
  // k-tile only; the weights of n-block b lie kBlockN / 16 units of
  // kKTiles tiles after those of b - 1.
  auto copy_stream_k_tile = [&](int t) {
    if (t == copy_segment.end) {
      copy_segment = next_wgmma_segment<Config>(copy_segment, tiles);
    }
    const int t_seg = t - copy_segment.first;
    const int x_tile = copy_segment.k_tile0 + t_seg - first_segment.k_tile0;
    const int w_tile =
        static_cast<int>((copy_segment.n0 - first_segment.n0) / kGemmUnitRows) *
            Config::kKTiles +
        x_tile;
    copier.copy_activations(stage_of(t), x_tile);
    copier.copy_weights(stage_of(t), barrier_of(t), w_tile,
                        first_segment.k_tile0);
    if (t_seg % kChunkTiles == 0) {
      copy_buffer = next_buffer(copy_buffer);
      copier.copy_chunk(s_chunks + copy_buffer * Config::kChunkBytes,
                        copy_segment.k_tile0 + t_seg, copy_segment.n0);
    }
  };
  // Returns the stage of tile t once it has landed (its cp.async group and,
  // with bulk weights, its mbarrier phase), with tile t + kAhead's copy
  // issued.
  auto begin_tile = [&](int t) {
    if (t == 0) {
      async_copy_wait<0>();
    } else {
      async_copy_wait<kAhead - 1>();
    }
    if constexpr (Tile::kBulkWeights) {
      mbarrier_wait_parity(barrier_of(t),
                           static_cast<u32>(t / Tile::kStages) & 1u);
    }
    __syncthreads();
    // A chunk lands with its first tile. Split-K: its buffer last held
    // chunk c - 2, whose tiles all ended before tile t (kChunkTiles >=
    // kAhead) and so before the barrier above. Stream-K: chunk c - 3,
    // which ended before c - 1 and c - 2, which span at least kAhead.
    const int t_copy = t + kAhead;
    if (t_copy < tiles) {
      if constexpr (Tile::kStreamK) {
        copy_stream_k_tile(t_copy);
      } else {
        copier.copy(stage_of(t + kAhead), barrier_of(t + kAhead), t + kAhead,
                    first_segment.k_tile0);
        if ((t + kAhead) % kChunkTiles == 0) {
          copier.copy_chunk(chunk_buffer((t + kAhead) / kChunkTiles),
                            first_segment.k_tile0 + t + kAhead);
        }
      }
    }
    async_copy_commit();
    return stage_of(t);
  };

  // Stores the block's sums of segment `segment` (rows m0 .., columns of
  // its n-block) once they are whole: split-K splits and stream-K workers
  // that share an n-block meet in the workspace first, and only the last
  // to arrive stores (every thread of the block calls). With
  // drain_copies, the block's last copies land first (the run's end).
  // The block's sums (rows m0 .., the columns of the n-block at n0) to the
  // output.
  auto store_output = [&](i64 n0) {
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
  };
  float(&r_flat)[Config::kAccumulators] =
      reinterpret_cast<float(&)[Config::kAccumulators]>(r_acc);

  // Stream-K: the workers that share the n-block at n0 (first, count), the
  // slot of the partial of its z-th worker, and its arrival counter
  // (schedule/split_k.cuh's layout with stream_k_slots partials per n-block).
  struct Share {
    int first;
    int workers;
  };
  auto share_of = [&](i64 n0) {
    const i64 unit0 = n0 / Tile::kBlockN * kTileUnits;
    const int first = stream_k_worker_of(unit0, units, splits);
    const int last = stream_k_worker_of(unit0 + kTileUnits - 1, units, splits);
    return Share{first, last - first + 1};
  };
  constexpr i64 kTileFloats = static_cast<i64>(kT) * Tile::kBlockN;
  auto partial_slot = [&](i64 n0, int z) {
    const int slots = stream_k_slots(kTileUnits, units, splits);
    return static_cast<float*>(args.workspace) +
           block_m * split_k_block_floats(kNBlocks, slots, kTileFloats) +
           (z * kNBlocks + n0 / Tile::kBlockN) * kTileFloats;
  };
  auto counter_of = [&](i64 n0) {
    return args.split_counters +
           split_k_counter_index(block_m, n0 / Tile::kBlockN, kT, Tile::kBlockN,
                                 Config::kN);
  };

  // The sums of segment `segment` once its last tile is in: to the output,
  // or to the workspace where split-K splits (and stream-K workers) that
  // share the n-block meet; split-K's last block to arrive stores the
  // output. Stream-K workers only publish their partial here and arrive
  // later (arrive_first_segment, meet_stream_k_partials), so that no worker
  // waits inside its run for its partial stores to drain (the release
  // atomic's fence, ~1-2.5 µs under full HBM load, bench/decode-notes.md
  // v24). Every thread of the block calls; with drain_copies, the block's
  // last copies land first (the run's end).
  auto finish_segment = [&](const WgmmaSegment& segment, bool drain_copies) {
    wgmma_wait<0>();
    if (drain_copies) async_copy_wait<0>();
    // The last period's partial sums.
    if constexpr (WgmmaScalePlan<Config>::kDeferred) {
      if (segment.end > segment.first) acc.fold();
    }
    HUMMINGD_UNROLL
    for (int r = 0; r < kR; ++r) {
      HUMMINGD_UNROLL
      for (int i = 0; i < kT / 2; ++i) wgmma_fence_operand(r_acc[r][i]);
    }
    HUMMINGD_TIMELINE_MARK(thread, 4);  // accumulators final

    if constexpr (Config::kWarpSplitK > 1) {
      // The planner never splits these (kernels/gemm_decode_plan.cc); a
      // launch that did would lose the other splits' sums.
      if (splits > 1) __trap();
      if (!sum_warp_k_slices<Config>(r_acc[0], s_base, warp, lane)) return;
    } else if constexpr (Tile::kStreamK) {
      const Share share = share_of(segment.n0);
      if (share.workers > 1) {
        store_partial<Config::kThreads>(
            r_flat,
            partial_slot(segment.n0, static_cast<int>(split) - share.first),
            static_cast<int>(thread));
        return;
      }
    } else if (splits > 1) {
      const bool last =
          reduce_split_k_tile<Config::kThreads, kT, Tile::kBlockN, Config::kN>(
              r_flat, args.workspace, args.split_counters, block_m, block_n,
              split, splits, thread, splits);
      HUMMINGD_TIMELINE_MARK(thread, 5);  // split-K arrival (and sum) done
      if (!last) return;
    }
    store_output(segment.n0);
  };

  // Stream-K arrivals. The run's first segment, when it shares its n-block,
  // arrives kAhead tiles into the next segment: its partial stores have
  // drained by then, so thread 0's release fence costs nothing, and the
  // begin_tile barrier between orders them before it. Whether it completed
  // the n-block waits in s_completes[0] until the end of the run, where the
  // last segment arrives (after a barrier) and the worker sums and stores
  // every n-block it completed, in worker order from the workspace (its own
  // partial included: the others' are visible after its acquire and the
  // barrier).
  __shared__ u32 s_completes[2];
  const Share first_share = share_of(first_segment.n0);
  const bool first_shared = Tile::kStreamK && first_share.workers > 1;
  const int first_arrival = first_segment.end + kAhead;
  auto arrive_first_segment = [&]() {
    if (thread == 0) {
      s_completes[0] = arrive_at_counter(counter_of(first_segment.n0)) ==
                       static_cast<u32>(first_share.workers - 1);
    }
  };
  auto meet_stream_k_partials = [&](const WgmmaSegment& last_segment) {
    const Share last_share = share_of(last_segment.n0);
    const bool last_shared =
        last_segment.n0 != first_segment.n0 && last_share.workers > 1;
    __syncthreads();
    if (first_shared && first_arrival >= tiles) arrive_first_segment();
    if (thread == 0) {
      s_completes[1] =
          last_shared && arrive_at_counter(counter_of(last_segment.n0)) ==
                             static_cast<u32>(last_share.workers - 1);
    }
    __syncthreads();
    const i64 n0s[2] = {first_segment.n0, last_segment.n0};
    const int workers[2] = {first_share.workers, last_share.workers};
    HUMMINGD_UNROLL
    for (int j = 0; j < 2; ++j) {
      if ((j == 0 && !first_shared) || !s_completes[j]) continue;
      sum_partials<Config::kThreads, Config::kAccumulators, kSplitBatch>(
          r_flat, partial_slot(n0s[j], 0), kNBlocks * kTileFloats, workers[j],
          static_cast<int>(thread));
      if (thread == 0) *counter_of(n0s[j]) = 0u;  // for the next launch
      store_output(n0s[j]);
    }
  };

  WgmmaSegment segment = first_segment;
  int compute_buffer = -1;  // stream-K: the buffer of the current chunk
  // The thread's rows' addresses in the current chunk, rebuilt as each
  // chunk begins (t = 0 first).
  WgmmaChunk<Config> chunk;
  for (int t = 0; t < tiles; ++t) {
    if constexpr (Tile::kStreamK) {
      if (t == segment.end) {
        finish_segment(segment, /*drain_copies=*/false);
        acc.clear();
        segment = next_wgmma_segment<Config>(segment, tiles);
      }
    }
    const u32 s_stage = begin_tile(t);
    if constexpr (Tile::kStreamK) {
      if (first_shared && t == first_arrival) arrive_first_segment();
    }
    if (t == 0) HUMMINGD_TIMELINE_MARK(thread, 2);          // first tile in
    if (t == tiles - 1) HUMMINGD_TIMELINE_MARK(thread, 3);  // last tile in
    const int t_seg = t - segment.first;
    if (t_seg % kChunkTiles == 0) {
      u32 s_buffer;
      if constexpr (Tile::kStreamK) {
        compute_buffer = next_buffer(compute_buffer);
        s_buffer = s_chunks + compute_buffer * Config::kChunkBytes;
      } else {
        s_buffer = chunk_buffer(t_seg / kChunkTiles);
      }
      chunk = wgmma_chunk_view<Config>(s_buffer, segment.k_tile0 + t_seg,
                                       segment.n0, warp, lane);
    }
    wgmma_compute_tile<Config>(acc, s_stage, chunk,
                               (segment.k_tile0 + t_seg) * Tile::kBlockK,
                               t_seg > 0, warp, lane);
  }
  finish_segment(segment, /*drain_copies=*/true);
  if constexpr (Tile::kStreamK) meet_stream_k_partials(segment);
}

#endif  // HUMMINGD_HAS_WGMMA

}  // namespace hummingd::device
