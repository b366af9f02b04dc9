#pragma once

// Global -> shared copies of the Hopper decode GEMM (gemm/wgmma_gemm.cuh):
//  - per stage, the weight units, each n-unit's k-units of the tile as one
//    contiguous run: with Tile::kBulkWeights by one bulk copy
//    (arch/bulk_copy.cuh) per run, issued by the first kBlockN / 16 threads
//    and completing on the stage's mbarrier; else by 16-byte cp.async spread
//    over all threads in the stage's commit group, thread t's slot i on
//    chunk t + i x threads or, with Tile::kWarpRunWeights, each warp's slots
//    on consecutive 512-byte pieces of one run (which wins depends on the
//    layer, the tile and the activation type: the planner chooses,
//    kernels/gemm_decode_tile_options.cc);
//  - per stage, by cp.async in the stage's commit group, the activation
//    tile in wgmma's K-major 128-byte-swizzled layout (arch/wgmma.cuh):
//    panel p (columns 64p..64p+63) of kTokens rows, row r's 16-byte chunk c
//    at p * kTokens * 128 + r * 128 + (c ^ (r % 8)) * 16;
//  - per chunk of Config::kChunkTiles k-tiles, by cp.async in the commit
//    group of the chunk's first tile, into one of two buffers after the
//    ring (gemm/wgmma_config.cuh): for every row of the block, the
//    16-byte-aligned window of its checkpoint scales (and zero points) that
//    holds the chunk's elements, so the k-loop never waits on a global
//    load; a window's last word copies only what lies inside the tensor,
//    and the tensors must be 16-byte aligned (QuantizedLinear checks).
// Device only.

#include "arch/async_copy.cuh"
#include "arch/bulk_copy.cuh"
#include "arch/platform.cuh"
#include "arch/shared_memory.cuh"
#include "arch/wgmma.cuh"
#include "gemm/wna16_args.cuh"
#include "pack/gemm_layout.cuh"

namespace hummingd::device {

template <int kTokens>
HUMMINGD_HD u32 wgmma_x_offset(int row, int chunk) {
  const int panel = chunk >> 3;
  return static_cast<u32>(panel * kTokens * kWgmmaSwizzleRowBytes +
                          row * kWgmmaSwizzleRowBytes +
                          (((chunk & 7) ^ (row & 7)) << 4));
}

// Entry column of the scale tensors holding k column k: 0 where one entry
// spans K (channel and tensor scales), without the division by a K that is
// no power of two (IMAD.HI sequences per tile; decode-notes v78).
template <class Config, class Index>
HUMMINGD_HD constexpr Index wgmma_scale_column(Index k) {
  if constexpr (Config::kScaleColumns == 1) {
    return 0;
  } else {
    return k / static_cast<Index>(Config::kScaleTileK);
  }
}

// Entry column of the scale tensors where the chunk starting at k-tile
// first_tile begins.
template <class Config>
HUMMINGD_HD i64 wgmma_chunk_first_column(int first_tile) {
  return wgmma_scale_column<Config>(static_cast<i64>(first_tile) *
                                    Config::Tile::kBlockK);
}

// The entry column, relative to chunk_first_col (the chunk's first), of
// the first k column of k-slice `slice` of the tile at column k_tile0 (the
// whole tile without k-split warps); computed once per tile. A slice holds
// whole scale entries or lies in one (WgmmaConfig), so the column of the
// slice's k column d is this plus d / kScaleTileK, a compile-time offset in
// the k-loop.
template <class Config>
HUMMINGD_HD int wgmma_warp_scale_column(int k_tile0, int slice,
                                        int chunk_first_col) {
  const int slice_k0 = k_tile0 + slice * Config::kUnitsKPerWarp * kGemmUnitCols;
  return wgmma_scale_column<Config>(slice_k0) - chunk_first_col;
}

// The cp.async weight copy of a stage: `threads` threads copy `chunks`
// 16-byte chunks, `chunks_per_run` per n-unit run, consecutive runs
// `run_words` words apart in the weight tensor; thread t's slot i copies
// chunk t + i * threads. Where every slot is whole and a run's chunks split
// evenly over the threads (or the threads over runs), slot i's chunk sits
// the same distance from slot 0's for every thread: (i * threads) /
// chunks_per_run runs and (i * threads) % chunks_per_run chunks later.
HUMMINGD_HD constexpr bool wgmma_weight_slots_at_offsets(int threads,
                                                         int chunks,
                                                         int chunks_per_run) {
  return chunks % threads == 0 &&
         (chunks_per_run % threads == 0 || threads % chunks_per_run == 0);
}

// That distance, in words.
HUMMINGD_HD constexpr i64 wgmma_weight_slot_offset(int slot, int threads,
                                                   int chunks_per_run,
                                                   i64 run_words) {
  return static_cast<i64>(slot) * threads / chunks_per_run * run_words +
         static_cast<i64>(slot) * threads % chunks_per_run * 4;
}

// Warp-run slots: the same copy with warp w's slot i on chunk
// (w * slots + i) * 32 + lane, slots = chunks / threads. When every slot is
// whole and a run holds whole warps' shares, a warp's slots are consecutive
// 512-byte pieces of one run, so slot i lies 32 chunks after slot 0 in the
// tensor and in the stage: cp.async takes that as an immediate (LDGSTS
// encodes -0x800..0x7ff on a global address: slots 0-3, the 4-bit k-split
// tiles' four; an 8-bit tile's slots 4-7 need an add), where slots of thread
// t + i * threads sit runs apart and cost a 64-bit add or a pointer each.
// Each warp still copies 512 contiguous bytes per instruction.
HUMMINGD_HD constexpr bool wgmma_warp_run_slots(int threads, int chunks,
                                                int chunks_per_run) {
  return threads % 32 == 0 && chunks % threads == 0 && chunks / threads > 1 &&
         chunks_per_run % (chunks / threads * 32) == 0;
}

// Whether a tile of `threads` threads, block_n rows and block_k columns of
// `bits`-bit weights can take warp-run slots: the copier's runs (one per
// 16-row n-unit, 2 x block_k x bits bytes) in 16-byte chunks
// (WgmmaStageCopier), for the host's checks of copy=warprun
// (kernels/gemm_config.cc).
HUMMINGD_HD constexpr bool wgmma_warp_run_weights_fit(int threads, int block_n,
                                                      int block_k, int bits) {
  return wgmma_warp_run_slots(threads, block_n / 16 * (block_k * bits / 8),
                              block_k * bits / 8);
}

// Whether a tile runs slice rings (WgmmaStageCopier::kSliceRings): k-split
// warps (warp_split_k > 1) on cp.async weights with warp-run slots, and on
// more than one 16-row n-unit only <= 4-bit weights (8-bit 8x32x512
// ksplit=4 ran 1.004-1.042x at 8 tokens with them, 4-bit 8x32x1024 /
// 16x32x1024 0.97-1.00x; bench/decode-notes.md v101). The host sizes the
// scale chunks by it too (gemm/wgmma_config.cuh).
HUMMINGD_HD constexpr bool wgmma_slice_rings(int threads, int block_n,
                                             int block_k, int bits,
                                             int warp_split_k,
                                             bool bulk_weights) {
  return warp_split_k > 1 && !bulk_weights && (block_n == 16 || bits <= 4) &&
         wgmma_warp_run_weights_fit(threads, block_n, block_k, bits);
}

// The chunk of a warp-run copy that `thread`'s slot `slot` copies.
HUMMINGD_HD constexpr int wgmma_warp_run_chunk(int thread, int slot,
                                               int slots) {
  return ((thread / 32) * slots + slot) * 32 + thread % 32;
}

// Slice rings (WgmmaStageCopier::kSliceRings): the first chunk of a
// warp-run copy that `thread`'s warp copies, n-unit warp % row_units's
// units of k-slice warp / row_units (each warp's share of a run of
// chunks_per_run chunks is its slice's units: slots x 32 chunks).
HUMMINGD_HD constexpr int wgmma_slice_run_chunk(int thread, int slots,
                                                int row_units,
                                                int chunks_per_run) {
  const int warp = thread / 32;
  return (warp % row_units) * chunks_per_run + (warp / row_units) * slots * 32 +
         thread % 32;
}

// Byte offset, inside row's window for a chunk starting at entry column
// first_col, of the row's element at first_col; the element at column
// first_col + d follows d * kElementBytes later. The k-loop keeps one such
// address per row and chunk, so a tile's scale read is one add.
template <class Config, int kElementBytes>
HUMMINGD_HD u32 wgmma_window_lead(i64 row, i64 first_col) {
  return static_cast<u32>(
             ((row / Config::kScaleTileN) * Config::kScaleColumns + first_col) *
             kElementBytes) &
         15u;
}

// The byte offsets of window words: 32-bit where the tensor's bytes fit
// (every layer but the largest with fine fp32 scales), so that a chunk's
// window copy does no 64-bit arithmetic.
template <bool kNarrow>
struct WgmmaWindowOffset {
  using Type = i64;
};
template <>
struct WgmmaWindowOffset<true> {
  using Type = u32;
};

// The part of wgmma_window_base that depends on the row alone, plus `word`
// whole words: the copier computes it once per thread, and a chunk's word
// is then wgmma_window_word of it (adding whole 16-byte words commutes with
// rounding down to one).
template <class Config, int kElementBytes, class Offset>
HUMMINGD_HD Offset wgmma_window_row_bytes(i64 row, int word) {
  return static_cast<Offset>((row / Config::kScaleTileN) *
                                 Config::kScaleColumns * kElementBytes +
                             16 * word);
}

// Byte offset of a window word (wgmma_window_base + 16 * word) of a chunk
// starting at entry column first_col, from its row part.
template <int kElementBytes, class Offset>
HUMMINGD_HD Offset wgmma_window_word(Offset row_bytes, int first_col) {
  return (row_bytes + static_cast<Offset>(first_col) * kElementBytes) &
         ~static_cast<Offset>(15);
}

// Byte offset, in a checkpoint scale (or zero-point) tensor of
// kElementBytes elements, of the 16-byte word where row's window for a
// chunk starting at entry column first_col begins.
template <class Config, int kElementBytes>
HUMMINGD_HD i64 wgmma_window_base(i64 row, i64 first_col) {
  return wgmma_window_word<kElementBytes>(
      wgmma_window_row_bytes<Config, kElementBytes, i64>(row, 0),
      static_cast<int>(first_col));
}

#if defined(__CUDA_ARCH__)

// One thread's share of every stage copy, with the global addresses of
// the first k-tile computed once: a later tile only adds its k offset, so
// the per-tile cost is the cp.async instructions themselves.
template <class Config>
struct WgmmaStageCopier {
  using Tile = typename Config::Tile;
  static constexpr int kThreads = Config::kThreads;
  // Activations: kTokens rows of kBlockK / 8 16-byte chunks.
  static constexpr int kXChunksPerRow = Tile::kBlockK / 8;
  static constexpr int kXChunks = Config::kTokens * kXChunksPerRow;
  static constexpr int kXSlots = (kXChunks + kThreads - 1) / kThreads;
  // Slice rings (k-split warps: warp w computes k-slice w / kRowUnits of
  // n-unit w % kRowUnits): the kRowUnits warps of a k-slice copy exactly
  // what they read, the slice's activation columns for every token (spread
  // over the slice's threads) and each warp its own n-unit's slice units
  // (warp-run slots), so a slice's stage data needs no barrier with the
  // other slices: the ring meets the slice (a warp sync for one n-unit, a
  // named barrier for more) and the block only where a scale chunk begins
  // (gemm/wgmma_gemm.cuh; bench/decode-notes.md v100, v101).
  // Only where the weights' warp-run slots exist (two or more whole 16-byte
  // slots per thread: not for 1- to 3-bit weights or 4-bit 16x16x512
  // slices) and, on two or more n-units, for <= 4-bit weights; the others
  // keep the per-tile block barrier (wgmma_slice_rings).
  static constexpr bool kSliceRings = Config::kSliceRings;
  static constexpr int kSliceThreads = 32 * Config::kRowUnits;
  static constexpr int kXSliceChunksPerRow =
      kXChunksPerRow / Config::kWarpSplitK;
  static_assert(!kSliceRings ||
                    (Config::kWarpSplitK * kSliceThreads == kThreads &&
                     Config::kWarpSplitK < 16 && kXChunks % kThreads == 0 &&
                     kXSliceChunksPerRow ==
                         Config::kUnitsKPerWarp * kGemmUnitCols / 8),
                "slice rings: kRowUnits warps per slice, a named barrier "
                "per slice, whole activation slots");
  // Strided slots: slot i copies the chunk column of slot 0, kXRowStep * i
  // rows lower, so its shared offset is slot 0's plus a constant (whole
  // 8-row swizzle groups) and its source slot 0's plus i row strides. Tiles
  // of 8 or more such slots (128- and 256-token tiles, and 64-token ones of
  // four warps on 128 columns) then keep one row pointer and a count of
  // valid rows instead of a pointer, offset and size per slot: 4 registers
  // in place of 4 per slot (the 256-token tile spilled with 64 of them), and
  // 40-48 fewer SASS in the 128-token kernels.
  static constexpr int kXRowStep = kThreads / kXChunksPerRow;
  static constexpr bool kStridedX =
      !kSliceRings && kXSlots >= 8 && kThreads % kXChunksPerRow == 0 &&
      kXRowStep % 8 == 0 && kXChunks % kThreads == 0;
  static constexpr int kXSlotArrays = kStridedX ? 1 : kXSlots;
  // Weights: kBlockN / 16 runs of kUnitsKPerTile consecutive units.
  static constexpr int kRuns = Tile::kBlockN / kGemmUnitRows;
  static constexpr int kRunBytes =
      Config::kUnitsKPerTile * Config::kUnitWords * 4;
  static_assert(kRuns <= kThreads && kRunBytes % 16 == 0,
                "one bulk copy per run, 16-byte multiples");
  static constexpr int kWChunksPerRun = kRunBytes / 16;
  static constexpr int kWChunks = kRuns * kWChunksPerRun;
  static constexpr int kWSlots =
      Tile::kBulkWeights ? 0 : (kWChunks + kThreads - 1) / kThreads;
  static constexpr i64 kWTileWords =
      static_cast<i64>(Config::kUnitsKPerTile) * Config::kUnitWords;
  // Slots at fixed distances from slot 0 (wgmma_weight_slots_at_offsets)
  // share one pointer: a pointer per slot cost the slot-unrolled 8-token
  // loops up to six address instructions per copy and tile where this costs
  // two (nvdisasm of 8x128x256 s4 on 4096x14336: 238 -> 226 per tile; ptxas
  // still builds each 64-bit address rather than take the distance as an
  // immediate, bench/decode-notes.md v53, v72).
  static constexpr bool kWSlotsAtOffsets =
      wgmma_weight_slots_at_offsets(kThreads, kWChunks, kWChunksPerRun);
  // Warp-run slots (copy=warprun): slot i 512 bytes after slot 0 in the
  // tensor and the stage, so one pointer and one shared offset, and no
  // address arithmetic per slot. A tile option, since it wins or loses by
  // tile and layer (bench/decode-notes.md v76, v77, v86: bf16 8192² on the
  // k-split tile 0.98-0.99x, bf16 6144x4096 on the same tile 1.005-1.015x,
  // the 8x64x256 half tile 1.00-1.01x).
  // Slice rings: warp w's share is n-unit w % kRowUnits's run's units of
  // slice w / kRowUnits (wgmma_slice_run_chunk).
  static constexpr bool kWarpRunW = Tile::kWarpRunWeights || kSliceRings;
  static_assert(!kWarpRunW ||
                    (!Tile::kBulkWeights &&
                     wgmma_warp_run_slots(kThreads, kWChunks, kWChunksPerRun)),
                "copy=warprun (and slice rings): cp.async weights whose "
                "runs hold whole warps' shares (wgmma_warp_run_weights_fit)");
  static_assert(!kSliceRings ||
                    kWChunksPerRun == Config::kWarpSplitK * kWSlots * 32,
                "slice rings: a warp's share of its run is its slice's units");
  static_assert(wgmma_warp_run_weights_fit(kThreads, Tile::kBlockN,
                                           Tile::kBlockK, Config::kBits) ==
                    wgmma_warp_run_slots(kThreads, kWChunks, kWChunksPerRun),
                "the host's check counts this copier's chunks");
  static constexpr int kWPointers = kWSlotsAtOffsets || kWarpRunW ? 1 : kWSlots;
  static constexpr int kWSharedOffsets = kWarpRunW ? 1 : kWSlots;
  static constexpr i64 kWRunWords =
      Config::kUnitsKPerRow * static_cast<i64>(Config::kUnitWords);

  const u16* g_x[kXSlotArrays];
  u32 s_x[kXSlotArrays];
  u32 x_bytes[kXSlotArrays];  // 16, or 0 to zero-fill a row past M
  // Strided slots: rows of M left from slot 0's row (slot i copies a row
  // past M, as zeros, where kXRowStep * i >= x_rows_left).
  int x_rows_left;
  // Bulk: this thread's run (threads < kRuns) at tile 0.
  const u32* g_run;
  u64 l2_policy;
  // cp.async: this thread's 16-byte chunks at tile 0.
  const u32* g_w[kWPointers > 0 ? kWPointers : 1];
  u32 s_w[kWSharedOffsets > 0 ? kWSharedOffsets : 1];
  // Window copies of a chunk (not k-major): this thread's items, each one
  // 16-byte word of one row's window, by their row part
  // (wgmma_window_row_bytes).
  static constexpr int kScaleItems = Tile::kBlockN * Config::kScaleWindowWords;
  static constexpr int kZeroItems = Tile::kBlockN * Config::kZeroWindowWords;
  static constexpr int kScaleItemSlots =
      Tile::kKMajorScales ? 0 : (kScaleItems + kThreads - 1) / kThreads;
  static constexpr int kZeroItemSlots =
      Config::kZeroWords ? (kZeroItems + kThreads - 1) / kThreads : 0;
  using WindowOffset = typename WgmmaWindowOffset<
      Config::kScaleTensorBytes + 16 < (i64{1} << 31) &&
      Config::kZeroTensorBytes + 16 < (i64{1} << 31)>::Type;
  WindowOffset scale_row_bytes[kScaleItemSlots > 0 ? kScaleItemSlots : 1];
  WindowOffset zero_row_bytes[kZeroItemSlots > 0 ? kZeroItemSlots : 1];
  // The checkpoint scales, or their k-major copy (Tile::kKMajorScales).
  const u8* g_scales;
  const u8* g_zeros;
  i64 n0;
  int thread;

  // k_tile0: the first k-tile this block copies.
  HUMMINGD_DEVICE WgmmaStageCopier(const GemmArgs& args, i64 m0, i64 n0_,
                                   int k_tile0, int thread_)
      : g_scales(static_cast<const u8*>(args.scales)),
        g_zeros(static_cast<const u8*>(args.zero_points)),
        n0(n0_),
        thread(thread_) {
    const i64 k0 = static_cast<i64>(k_tile0) * Tile::kBlockK;
    const u16* x = static_cast<const u16*>(args.x);
    HUMMINGD_UNROLL
    for (int i = 0; i < kXSlotArrays; ++i) {
      int id = min_int(thread + i * kThreads, kXChunks - 1);
      if constexpr (kSliceRings) {
        // Slot i of the slice's thread l: token (l + kSliceThreads i) /
        // kXSliceChunksPerRow, chunk (l + kSliceThreads i) %
        // kXSliceChunksPerRow of the slice's columns.
        const int local = thread % kSliceThreads + kSliceThreads * i;
        id = local / kXSliceChunksPerRow * kXChunksPerRow +
             (thread / kSliceThreads) * kXSliceChunksPerRow +
             local % kXSliceChunksPerRow;
      }
      const int row = id / kXChunksPerRow;
      const int chunk = id % kXChunksPerRow;
      const bool valid = m0 + row < args.m;
      g_x[i] = x + (valid ? m0 + row : 0) * Config::kK + k0 + chunk * 8;
      s_x[i] = wgmma_x_offset<Config::kTokens>(row, chunk);
      x_bytes[i] = valid ? 16u : 0u;
      if constexpr (kStridedX) {
        const i64 rows_left = args.m - m0 - row;
        x_rows_left = valid ? static_cast<int>(rows_left < Config::kTokens
                                                   ? rows_left
                                                   : Config::kTokens)
                            : 0;
      }
    }
    auto run_start = [&](int run) {
      return args.weights +
             ((n0 / kGemmUnitRows + run) * Config::kUnitsKPerRow +
              static_cast<i64>(k_tile0) * Config::kUnitsKPerTile) *
                 Config::kUnitWords;
    };
    g_run = run_start(min_int(thread, kRuns - 1));
    l2_policy = 0;
    if constexpr (Tile::kBulkWeights) {
      if (thread < kRuns) l2_policy = l2_evict_first_policy();
    }
    HUMMINGD_UNROLL
    for (int i = 0; i < kWSharedOffsets; ++i) {
      const int id =
          kSliceRings ? wgmma_slice_run_chunk(thread, kWSlots,
                                              Config::kRowUnits, kWChunksPerRun)
          : kWarpRunW ? wgmma_warp_run_chunk(thread, 0, kWSlots)
                      : min_int(thread + i * kThreads, kWChunks - 1);
      const int run = id / kWChunksPerRun;
      const int chunk = id % kWChunksPerRun;
      if (i < kWPointers) g_w[i] = run_start(run) + chunk * 4;
      s_w[i] =
          static_cast<u32>(Config::kOffsetW + run * kRunBytes + chunk * 16);
    }
    window_rows<Config::kScaleWindowWords, Config::kScaleElementBytes,
                kScaleItemSlots>(scale_row_bytes);
    window_rows<Config::kZeroWindowWords, Config::kZeroElementBytes,
                kZeroItemSlots>(zero_row_bytes);
  }

  HUMMINGD_DEVICE static int min_int(int a, int b) { return a < b ? a : b; }

  // Copies the stage of k-tile k_tile0 + tile into s_stage; its weights
  // complete on s_barrier.
  HUMMINGD_DEVICE void copy(u32 s_stage, u32 s_barrier, int tile,
                            int k_tile0) const {
    copy_activations(s_stage, tile);
    copy_weights(s_stage, s_barrier, tile, k_tile0);
  }

  // Slice rings: the barrier of this thread's k-slice (its warp alone for
  // one n-unit).
  HUMMINGD_DEVICE void slice_sync() const {
    if constexpr (kSliceThreads == 32) {
      warp_sync();
    } else {
      named_barrier_sync(1 + thread / kSliceThreads, kSliceThreads);
    }
  }

  // The activation part of a stage: what the previous kernel on the stream
  // may have written.
  HUMMINGD_DEVICE void copy_activations(u32 s_stage, int tile) const {
    if constexpr (kStridedX) {
      const u16* g_tile = g_x[0] + static_cast<i64>(tile) * Tile::kBlockK;
      const u32 s_tile = s_stage + s_x[0];
      constexpr u32 kSharedStep = kXRowStep * kWgmmaSwizzleRowBytes;
      constexpr i64 kGlobalStep = static_cast<i64>(kXRowStep) * Config::kK;
      // Every token block but the last is whole: no per-slot sizes there.
      if (x_rows_left > (kXSlots - 1) * kXRowStep) {
        HUMMINGD_UNROLL
        for (int i = 0; i < kXSlots; ++i) {
          copy_16_async_bytes(s_tile + i * kSharedStep,
                              g_tile + i * kGlobalStep, 16u);
        }
      } else {
        HUMMINGD_UNROLL
        for (int i = 0; i < kXSlots; ++i) {
          const bool valid = i * kXRowStep < x_rows_left;
          copy_16_async_bytes(s_tile + i * kSharedStep,
                              valid ? g_tile + i * kGlobalStep : g_tile,
                              valid ? 16u : 0u);
        }
      }
    } else {
      HUMMINGD_UNROLL
      for (int i = 0; i < kXSlots; ++i) {
        if (kXChunks % kThreads != 0 && thread + i * kThreads >= kXChunks) {
          break;
        }
        copy_16_async_bytes(s_stage + s_x[i],
                            g_x[i] + static_cast<i64>(tile) * Tile::kBlockK,
                            x_bytes[i]);
      }
    }
  }

  // The read-only part of a stage: its weight units (bulk on s_barrier, or
  // cp.async).
  HUMMINGD_DEVICE void copy_weights(u32 s_stage, u32 s_barrier, int tile,
                                    int k_tile0) const {
    if constexpr (Tile::kBulkWeights) {
      if (thread < kRuns) {
        if (thread == 0) {
          mbarrier_arrive_expect_tx(s_barrier, Config::kStageWBytes);
        }
        bulk_copy_global_to_shared(
            s_stage + Config::kOffsetW + thread * kRunBytes,
            g_run + tile * kWTileWords, kRunBytes, s_barrier, l2_policy);
      }
    } else if constexpr (kWarpRunW) {
      const u32* g_tile = g_w[0] + tile * kWTileWords;
      HUMMINGD_UNROLL
      for (int i = 0; i < kWSlots; ++i) {
        copy_16_async_bytes(s_stage + s_w[0] + i * 32 * 16, g_tile + i * 32 * 4,
                            16u);
      }
    } else {
      HUMMINGD_UNROLL
      for (int i = 0; i < kWSlots; ++i) {
        if (kWChunks % kThreads != 0 && thread + i * kThreads >= kWChunks) {
          break;
        }
        const u32* g_chunk =
            kWSlotsAtOffsets ? g_w[0] + tile * kWTileWords +
                                   wgmma_weight_slot_offset(
                                       i, kThreads, kWChunksPerRun, kWRunWords)
                             : g_w[i] + tile * kWTileWords;
        copy_16_async_bytes(s_stage + s_w[i], g_chunk, 16u);
      }
    }
  }

  // Copies the scale (and zero-point) windows of the chunk whose first
  // k-tile is first_tile into the chunk buffer s_chunk (cp.async, in the
  // caller's commit group).
  HUMMINGD_DEVICE void copy_chunk(u32 s_chunk, int first_tile) const {
    const i64 first_col = wgmma_chunk_first_column<Config>(first_tile);
    if constexpr (Tile::kKMajorScales) {
      copy_k_major_columns(s_chunk, first_col);
      return;
    }
    copy_windows<kScaleItems, Config::kScaleElementBytes>(
        s_chunk, g_scales, Config::kScaleTensorBytes, scale_row_bytes,
        static_cast<int>(first_col));
    if constexpr (Config::kZeroWords) {
      copy_windows<kZeroItems, Config::kZeroElementBytes>(
          s_chunk + Config::kOffsetChunkZeros, g_zeros,
          Config::kZeroTensorBytes, zero_row_bytes,
          static_cast<int>(first_col));
    }
  }

 private:
  // k-major scales: column first_col + c of the block's rows is kBlockN
  // contiguous elements, copied to s_chunk + c * kScaleColumnStride;
  // columns past the tensor are zero-filled.
  HUMMINGD_DEVICE void copy_k_major_columns(u32 s_chunk, i64 first_col) const {
    constexpr int kBytes = Config::kScaleElementBytes;
    constexpr int kPiecesPerCol = Tile::kBlockN * kBytes / 16;
    constexpr int kPieces = Config::kChunkCols * kPiecesPerCol;
    HUMMINGD_UNROLL
    for (int i = 0; i < (kPieces + kThreads - 1) / kThreads; ++i) {
      const int id = thread + i * kThreads;
      if (kPieces % kThreads != 0 && id >= kPieces) break;
      const int c = id / kPiecesPerCol;
      const int piece = id % kPiecesPerCol;
      const i64 col = first_col + c;
      const bool inside = col < Config::kScaleColumns;
      const i64 src = (col * Config::kN + n0) * kBytes + piece * 16;
      copy_16_async_bytes(s_chunk + c * Config::kScaleColumnStride + piece * 16,
                          g_scales + (inside ? src : 0), inside ? 16u : 0u);
    }
  }

  // The row parts of this thread's window items (item id = thread + i *
  // kThreads is word id % kWords of row id / kWords). Without a window
  // (kWords = 0, e.g. no zero points) there is nothing to place, and no
  // division by zero is instantiated (nvcc warned of one).
  template <int kWords, int kElementBytes, int kSlots, int kArray>
  HUMMINGD_DEVICE void window_rows(WindowOffset (&row_bytes)[kArray]) const {
    if constexpr (kWords > 0) {
      constexpr int kItems = Tile::kBlockN * kWords;
      HUMMINGD_UNROLL
      for (int i = 0; i < kSlots; ++i) {
        const int id = min_int(thread + i * kThreads, kItems - 1);
        row_bytes[i] =
            wgmma_window_row_bytes<Config, kElementBytes, WindowOffset>(
                n0 + id / kWords, id % kWords);
      }
    }
  }

  // Copies this thread's items of the windows of the chunk starting at
  // entry column first_col; a word that runs past the tensor copies only
  // the bytes inside it.
  template <int kItems, int kElementBytes, int kArray>
  HUMMINGD_DEVICE void copy_windows(u32 s_windows, const u8* g_tensor,
                                    i64 tensor_bytes,
                                    const WindowOffset (&row_bytes)[kArray],
                                    int first_col) const {
    const WindowOffset kTensorBytes = static_cast<WindowOffset>(tensor_bytes);
    HUMMINGD_UNROLL
    for (int i = 0; i < (kItems + kThreads - 1) / kThreads; ++i) {
      const int id = thread + i * kThreads;
      if (kItems % kThreads != 0 && id >= kItems) break;
      const WindowOffset src =
          wgmma_window_word<kElementBytes>(row_bytes[i], first_col);
      const u32 bytes = src + 16 <= kTensorBytes ? 16u
                        : src < kTensorBytes
                            ? static_cast<u32>(kTensorBytes - src)
                            : 0u;
      copy_16_async_bytes(s_windows + id * 16, g_tensor + (bytes ? src : 0),
                          bytes);
    }
  }
};

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
