#pragma once

// Compile-time description of one decode-shaped WNA16 GEMM kernel for
// Hopper (gemm/wgmma_gemm.cuh): the weights are the 64-row A operand of
// wgmma (decoded into registers), the kTokens activation rows the N
// operand, read from shared memory ("swap AB": Y^T = W . X^T). One block
// owns kBlockN output columns (kWarpgroups warpgroups of kRowBlocks x 64
// weight rows) of a kTokens-row slab of Y over one split-K range.
//
// The shared-memory size is a plain function so that the planner
// (kernels/gemm_config.cc) computes the same number the kernel uses.

#include "arch/platform.cuh"
#include "gemm/wna16_config.cuh"
#include "memory/wgmma_tiles.cuh"
#include "pack/gemm_layout.cuh"

namespace hummingd::device {

inline constexpr int kWgmmaRowsPerWarpgroup = 64;
inline constexpr int kWgmmaSharedAlign = 1024;  // the 128-byte swizzle atom
// Blocks per SM a tile runs unless it says otherwise (WgmmaTile).
inline constexpr int kWgmmaDefaultBlocksPerSm = 2;

HUMMINGD_HD constexpr int round_up_int(int value, int multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Registers a thread may hold when `blocks` blocks of `threads` share an
// SM's 65536: allocated 8 per thread at a time, at most 255.
HUMMINGD_HD constexpr int wgmma_register_cap(int threads, int blocks) {
  const int per_thread = 65536 / (threads * blocks) / 8 * 8;
  return per_thread < 255 ? per_thread : 255;
}

// Bytes of one pipeline stage, in order: the activation tile (kTokens rows
// x kBlockK, 128-byte swizzled, 64 columns per 1024-aligned panel) and the
// weight units. Rounded up to the swizzle atom.
HUMMINGD_HD constexpr int wgmma_stage_bytes(int tokens, int block_n,
                                            int block_k, int bits) {
  const int x_bytes = tokens * block_k * 2;
  const int w_bytes =
      (block_n / kGemmUnitRows) * (block_k / kGemmUnitCols) * 128 * bits;
  return round_up_int(x_bytes + w_bytes, kWgmmaSharedAlign);
}

// Scales and zero points travel in chunks, not with every stage: a chunk
// holds, for each row of the block, the elements of chunk_tiles
// consecutive k-tiles of the split as one 16-byte-aligned window of the
// row's checkpoint scales (one 16-byte copy per row and window word, not a
// scattered 4-byte copy per row and tile: those cost 8-20% of the decode
// kernel's time, bench/decode-notes.md v18). A chunk spans at least 16
// bytes of elements and at least the ring's lead (wgmma_ring_lead), so
// that two chunk buffers suffice: chunk c + 1 lands with its first tile,
// whose copy is issued once chunk c - 1 is no longer read. With
// long_chunks (wgmma_long_scale_chunks) a chunk spans as many tiles, a
// power of two up to kLongChunkTiles, as keep a row's elements within
// kLongChunkRowBytes (group-128 fp16 scales on 1024-column tiles: eight
// tiles, the whole of K = 8192).
inline constexpr int kLongChunkTiles = 8;
inline constexpr int kLongChunkRowBytes = 128;
HUMMINGD_HD constexpr int wgmma_scale_chunk_tiles(int lead,
                                                  int entries_per_tile,
                                                  int element_bytes,
                                                  bool long_chunks) {
  const int tile_bytes = entries_per_tile * element_bytes;
  const int fill = 16 / tile_bytes;
  int at_least = fill > 1 ? fill : 1;
  if (long_chunks) {
    int tiles = 1;
    while (tiles * 2 <= kLongChunkTiles &&
           tiles * 2 * tile_bytes <= kLongChunkRowBytes) {
      tiles *= 2;
    }
    at_least = tiles > at_least ? tiles : at_least;
  }
  return at_least > lead ? at_least : lead;
}

// Tiles the copy ring runs ahead of the compute: tile t + lead is copied
// while tile t computes. kStages - 2 in general (the wgmmas of tile t - 1
// may still read its slot). k-split warp tiles (mma.sync) have nothing in
// flight past the tile's barrier and may reuse the slot of tile t - 1: a
// three-stage one runs two ahead instead of one (A/B w, bench/decode-notes.md
// v48: 0.93-0.99x), but from two to three ahead only queued (1.07-1.11x on
// four stages, as A/B v found for the other 8-token tiles).
HUMMINGD_HD constexpr int wgmma_ring_lead(int stages, int warp_split_k) {
  return warp_split_k > 1 && stages == 3 ? 2 : stages - 2;
}

// Whether a k-split tile's slices are whole warpgroups on wgmma instead of
// warps on mma.sync: 16 or 32 tokens, and four 16-row n-units (64 rows, the
// A operand of one m64 wgmma) per slice. Its wgmmas may still read tile
// t - 1's slot past the tile's barrier, so it takes four or more stages
// (the ring's general lead, kStages - 2).
HUMMINGD_HD constexpr bool wgmma_warpgroup_slices(int tokens, int block_n,
                                                  int warp_split_k) {
  return warp_split_k > 1 && (tokens == 16 || tokens == 32) &&
         block_n == 4 * kGemmUnitRows;
}

// Whether a tile's scale chunks run long (wgmma_scale_chunk_tiles): on
// slice-ring tiles (memory/wgmma_tiles.cuh, wgmma_slice_rings) a chunk's
// start is the ring's only block barrier. Measured (decode-notes v102):
// 0.965-0.99x on the 8-bit one-n-unit tiles and the 4-bit 8x32x1024 /
// 16x32x1024 ones, but 1.005-1.024x on 4-bit 8x16x1024 at four stages
// (bf16 worst), which keeps the lead's chunks. Only at up to two blocks
// per SM, where the longer windows fit beside the ring: the three- and
// four-per-SM tiles are planned within a few KB of the SM's shared memory
// (8-bit 16x16x512 blocks=3 lost its residency with them).
HUMMINGD_HD constexpr bool wgmma_long_scale_chunks(bool slice_rings,
                                                   int blocks_per_sm,
                                                   int block_n, int bits,
                                                   int stages) {
  const bool four_bit_one_unit_four_stages =
      block_n == 16 && bits <= 4 && stages >= 4;
  return slice_rings && blocks_per_sm <= 2 && !four_bit_one_unit_four_stages;
}

// 16-byte words of one row's window: the chunk's entries (a chunk of whole
// tiles never spans more than chunk_tiles * entries_per_tile of them),
// starting anywhere in a 16-byte word.
HUMMINGD_HD constexpr int wgmma_chunk_window_words(int chunk_tiles,
                                                   int entries_per_tile,
                                                   int element_bytes) {
  return (chunk_tiles * entries_per_tile * element_bytes - element_bytes + 31) /
         16;
}

// Bytes of one chunk buffer of a block_n-row block: the rows' scale
// windows, then their zero-point windows (zero_bytes 0: no zero points).
HUMMINGD_HD constexpr int wgmma_chunk_bytes(int lead, int block_n,
                                            int entries_per_tile,
                                            int scale_bytes, int zero_bytes,
                                            bool long_chunks) {
  const int tiles =
      wgmma_scale_chunk_tiles(lead, entries_per_tile, scale_bytes, long_chunks);
  const int zero_words =
      zero_bytes > 0
          ? wgmma_chunk_window_words(tiles, entries_per_tile, zero_bytes)
          : 0;
  return block_n *
         (wgmma_chunk_window_words(tiles, entries_per_tile, scale_bytes) +
          zero_words) *
         16;
}

// Dynamic shared memory of a launch: the stages, the two chunk buffers
// (chunk_bytes each: the block's scale windows, then its zero-point
// windows), one 8-byte mbarrier per stage (the weights' bulk copies
// complete on it), and the slack that aligns the first stage to 1024
// bytes. The mbarriers are reserved on every tile, bulk or not: without
// those 24-64 bytes the zero-point tiles fit two per SM "to the byte" of
// the dynamic shared memory, and beside the split-K epilogue's 16 static
// bytes ran one per SM, 1.1-1.4x slower (decode-notes v128). The budgets
// count those bytes since planner v75 (kernels/gemm_config.h,
// kGemmStaticSharedBytes); the branch gpu-zero-fit removes both
// (decode-notes v130).
HUMMINGD_HD constexpr int wgmma_shared_bytes(int stages, int stage_bytes,
                                             int chunk_bytes) {
  return stages * stage_bytes + 2 * chunk_bytes + stages * 8 +
         kWgmmaSharedAlign;
}

// Columns of k-major scales (layout=kmajor) one chunk of chunk_tiles
// k-tiles spans. Entries narrower than a tile: whole entries, chunk_tiles *
// entries of them. Wider: chunk_tiles tiles starting anywhere span at most
// floor((chunk_tiles - 1) * block_k / scale_tile_k) + 2 columns, and never
// more than chunk_tiles. The planner (kernels/gemm_config.cc,
// WgmmaTakesKMajorScales) checks the same number against the chunk buffer.
HUMMINGD_HD constexpr long long wgmma_k_major_chunk_cols(
    int chunk_tiles, int entries, int block_k, long long scale_tile_k) {
  if (scale_tile_k < block_k) {
    return static_cast<long long>(chunk_tiles) * entries;
  }
  const long long spanned =
      (chunk_tiles - 1) * static_cast<long long>(block_k) / scale_tile_k + 2;
  return spanned < chunk_tiles ? spanned : chunk_tiles;
}

// Scale entries one k-tile of kBlockK columns spans (the entry tile is
// scale_tile_k columns wide).
HUMMINGD_HD constexpr int wgmma_scale_entries(long long scale_tile_k,
                                              int block_k) {
  return scale_tile_k >= block_k ? 1 : static_cast<int>(block_k / scale_tile_k);
}

// kBulkWeights_: weights by cp.async.bulk on per-stage mbarriers instead
// of per-thread cp.async (memory/wgmma_tiles.cuh). kPrescaled_: scales
// applied to every weight pair, never to fp32 partial sums
// (gemm/wgmma_tile_compute.cuh, WgmmaScalePlan). kKMajorScales_: the
// scales (GemmArgs::scales) are a [column][row] copy of the
// checkpoint's [row][column] tensor (one contiguous run of kBlockN
// elements per column and block), so a chunk is kChunkCols such runs
// instead of one window per row (memory/wgmma_tiles.cuh).
// kWarpSplitK_ > 1: the block's warps split each k-tile that many ways
// instead of owning 16 rows each, so one block holds kBlockN = 16 * warps /
// kWarpSplitK_ rows over the whole of its K range and the slices meet in
// shared memory at the end: a layer needs no split-K to fill the machine
// (bench/decode-notes.md v46). At 8 or 16 tokens each slice is one warp
// per 16-row n-unit on mma.sync; with kBlockN = 64 at 16 or 32 tokens
// (wgmma_warpgroup_slices, planner v57) each slice is a whole warpgroup on
// wgmma, so the same tile text at 16 tokens with BN 64 names a wgmma kernel
// since then (decode-notes v104).
// kBlocksPerSm_: the blocks per SM the launch plans (the stub's launch
// bounds cap the registers to fit them; kernels/gemm_config.cc,
// WgmmaBlocksPerSm).
// kEarlyTiles_ > 0: only the first kEarlyTiles_ prologue tiles' weights are
// fetched before the previous kernel completes (gemm/wgmma_gemm.cuh); 0:
// every prologue tile's.
// kWarpRunWeights_: each warp's cp.async weight chunks of a stage are
// consecutive 512-byte pieces of one run, so a thread keeps one pointer and
// one shared offset for all of them (memory/wgmma_tiles.cuh,
// wgmma_warp_run_slots); else thread t's slot i copies chunk t + i x threads.
template <int kTokens_, int kBlockN_, int kBlockK_, int kWarpgroups_,
          int kStages_, bool kBulkWeights_ = false, bool kPrescaled_ = false,
          bool kKMajorScales_ = false, int kWarpSplitK_ = 1,
          int kBlocksPerSm_ = kWgmmaDefaultBlocksPerSm, int kEarlyTiles_ = 0,
          bool kWarpRunWeights_ = false>
struct WgmmaTile {
  static constexpr int kTokens = kTokens_;
  static constexpr int kBlockM = kTokens_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kBlockK = kBlockK_;
  static constexpr int kWarpgroups = kWarpgroups_;
  static constexpr int kStages = kStages_;
  static constexpr bool kBulkWeights = kBulkWeights_;
  static constexpr bool kPrescaled = kPrescaled_;
  static constexpr bool kKMajorScales = kKMajorScales_;
  static constexpr int kWarpSplitK = kWarpSplitK_;
  static constexpr int kBlocksPerSm = kBlocksPerSm_;
  static constexpr int kEarlyTiles = kEarlyTiles_;
  static constexpr bool kWarpRunWeights = kWarpRunWeights_;
};

template <class Format_, class Tile_, i64 kN_, i64 kK_>
struct WgmmaConfig : GemmScaleTiling<Format_, kN_, kK_> {
  using Format = Format_;
  using Tile = Tile_;
  static constexpr i64 kN = kN_;
  static constexpr i64 kK = kK_;
  static constexpr int kBits = Format::kBits;
  static constexpr int kTokens = Tile::kTokens;
  static constexpr int kThreads = 128 * Tile::kWarpgroups;
  static constexpr int kWarps = 4 * Tile::kWarpgroups;
  static constexpr int kWarpSplitK = Tile::kWarpSplitK;
  // Each warp's 16 rows of a row block are one n-unit; with kWarpSplitK > 1
  // every warp owns one n-unit's k-slice of the tile instead (a warpgroup's
  // four warps one slice's four n-units with kWarpgroupSlices).
  static constexpr int kRowUnits = Tile::kBlockN / kGemmUnitRows;
  static constexpr int kRowBlocks = kWarpSplitK > 1
                                        ? 1
                                        : Tile::kBlockN /
                                              (kWgmmaRowsPerWarpgroup *
                                               Tile::kWarpgroups);
  static constexpr int kUnitsKPerTile = Tile::kBlockK / kGemmUnitCols;
  // The k-units of a tile one warp computes (its k-slice).
  static constexpr int kUnitsKPerWarp = kUnitsKPerTile / kWarpSplitK;
  static constexpr int kKTiles = static_cast<int>(kK / Tile::kBlockK);
  static constexpr i64 kUnitsKPerRow = kK / kGemmUnitCols;
  static constexpr int kUnitWords = 32 * kBits;
  static constexpr int kAccumulators = kRowBlocks * kTokens / 2;
  // Registers a thread may hold at the planned blocks per SM (the
  // allocation rule of kernels/gemm_config.cc, Sm90ResidentBlocks).
  static constexpr int kRegisterCap =
      wgmma_register_cap(kThreads, Tile::kBlocksPerSm);
  // Tiles the k-loop runs per pass (gemm/wgmma_gemm.cuh): kStages, unrolled
  // one per ring slot so that every stage address is a compile-time offset,
  // for tiles of up to 16 accumulators per thread (8 to 32 tokens) with at
  // least 128 registers; one elsewhere. The unrolled pass took 7-30 more
  // registers (bench/decode-notes.md v70): it spilled the 64-token tile at
  // its 128, and an e4m3 16-token one at three blocks per SM (80).
  static constexpr int kTilesPerPass =
      kAccumulators <= 16 && kRegisterCap >= 128 ? Tile::kStages : 1;

  using Scales = GemmScaleTiling<Format_, kN_, kK_>;
  using Scales::kScaleColumns;
  using Scales::kScaleTileK;
  using Scales::kScaleTileN;
  static constexpr int kScaleEntries =
      wgmma_scale_entries(kScaleTileK, Tile::kBlockK);
  static constexpr bool kZeroWords = Format::kZero != ZeroKind::kNone;
  static constexpr int kScaleElementBytes =
      ScalarTraits<Format::kScaleType>::kBytes;
  static constexpr int kZeroElementBytes =
      Format::kZero == ZeroKind::kInteger
          ? 1
          : ScalarTraits<Format::kActivationType>::kBytes;

  // Stage layout (byte offsets inside a stage).
  static constexpr int kStageXBytes = kTokens * Tile::kBlockK * 2;
  static constexpr int kStageWBytes =
      (Tile::kBlockN / kGemmUnitRows) * kUnitsKPerTile * kUnitWords * 4;
  static constexpr int kOffsetW = kStageXBytes;
  static constexpr int kStageBytes =
      wgmma_stage_bytes(kTokens, Tile::kBlockN, Tile::kBlockK, kBits);
  // k-split slices of whole warpgroups (wgmma_warpgroup_slices); the ring
  // lead's three-stage exception is for mma.sync slices only.
  static constexpr bool kWarpgroupSlices =
      wgmma_warpgroup_slices(kTokens, Tile::kBlockN, kWarpSplitK);
  static_assert(!kWarpgroupSlices || Tile::kStages >= 4,
                "warpgroup slices keep the general ring lead (4+ stages)");
  // k-split warp tiles run unsplit, so the k-loop may take its tile count
  // as a compile-time constant (gemm/wgmma_gemm.cuh): no end-of-K checks
  // inside an unrolled pass, copies past the end and chunk copies dropped
  // at compile time. Sweep ea (bench/decode-notes.md v105): 0.93-0.97x on
  // the 16-token tiles, 0.96-0.99x on the 8-bit ones; not at 32 tokens,
  // where the warpgroup slices then spilled at their 128-register cap
  // (1.2x), nor on 8-token tiles of fewer than eight k-tiles (K = 4096 at
  // 1024 columns), where 4-bit ones ran 1.05x slower and 8-bit ones
  // 1.00-1.03x unless only their first tile's weights go early (`early=1`:
  // 0.96x; sweeps ea, eb). Unexplained: their SASS is shorter. Unmeasured
  // and ruled by the nearest measured case: 1- to 3-bit and 5- to 7-bit
  // weights, early=2 and more.
  static constexpr bool kCompileTimeKTiles =
      kWarpSplitK > 1 && kTokens <= 16 &&
      !(kTokens == 8 && kKTiles < 8 && (kBits <= 4 || Tile::kEarlyTiles == 0));
  // How far the ring's copies run ahead of the tile computed: what slot
  // reuse allows (wgmma_ring_lead). The host sizes the scale chunks by it
  // (kernels/gemm_config.cc), so they follow it here too.
  static constexpr int kRingLead = wgmma_ring_lead(Tile::kStages, kWarpSplitK);
  // k-split warps that meet per k-slice (memory/wgmma_tiles.cuh).
  static constexpr bool kSliceRings =
      wgmma_slice_rings(kThreads, Tile::kBlockN, Tile::kBlockK, kBits,
                        kWarpSplitK, Tile::kBulkWeights);
  static constexpr bool kLongScaleChunks = wgmma_long_scale_chunks(
      kSliceRings, Tile::kBlocksPerSm, Tile::kBlockN, kBits, Tile::kStages);
  // Scale / zero-point chunks (wgmma_scale_chunk_tiles): one buffer is the
  // kBlockN rows' scale windows, then their zero-point windows.
  static constexpr int kChunkTiles = wgmma_scale_chunk_tiles(
      kRingLead, kScaleEntries, kScaleElementBytes, kLongScaleChunks);
  // A compile-time K of more k-tiles than the lead but no more than
  // stages, its scales one chunk: no slot is ever refilled, so the prologue
  // copies every tile and the loop none (gemm/wgmma_gemm.cuh; K within the
  // lead is copied whole by the prologue anyway). Only with early=N: the
  // rest of the prologue's weights then go after the grid-dependency wait,
  // each with its tile's activations. Sweep ec2 (bench/decode-notes.md
  // v106, the 4096 x 4096 16-token tile, four k-tiles in four stages,
  // early=1): 0.93-0.96x at M = 9-12 and 0.99x at 16 against the plan
  // before; with every tile's weights before the wait it ran 1.11-1.17x.
  // Only at 16 tokens, where it was measured (the 8-token 8-bit three-stage
  // tiles over three k-tiles, 4096 x 3072 with early=1, keep the lead).
  static constexpr bool kWholeKInRing = kCompileTimeKTiles && kTokens == 16 &&
                                        Tile::kEarlyTiles > 0 &&
                                        (kKTiles > kRingLead) &&
                                        (kKTiles <= Tile::kStages) &&
                                        (kChunkTiles >= kKTiles);
  static constexpr int kAhead = kWholeKInRing ? kKTiles : kRingLead;
  // Prologue tiles whose weights go before the grid-dependency wait.
  static_assert(Tile::kEarlyTiles >= 0 && Tile::kEarlyTiles < kAhead,
                "early=N takes 1 <= N < the prologue's tiles (0: all)");
  static constexpr int kEarlyTiles =
      Tile::kEarlyTiles > 0 ? Tile::kEarlyTiles : kAhead;
  static constexpr int kScaleWindowWords =
      wgmma_chunk_window_words(kChunkTiles, kScaleEntries, kScaleElementBytes);
  static constexpr int kZeroWindowWords =
      kZeroWords ? wgmma_chunk_window_words(kChunkTiles, kScaleEntries,
                                            kZeroElementBytes)
                 : 0;
  static constexpr int kOffsetChunkZeros =
      Tile::kBlockN * kScaleWindowWords * 16;
  // k-major scales: the chunk's columns, each kBlockN elements, in the
  // space of the row windows; a column's elements are kScaleColumnStride
  // bytes from the previous column's.
  static constexpr int kChunkCols = static_cast<int>(wgmma_k_major_chunk_cols(
      kChunkTiles, kScaleEntries, Tile::kBlockK, kScaleTileK));
  static constexpr int kScaleColumnStride =
      Tile::kKMajorScales ? Tile::kBlockN * kScaleElementBytes
                          : kScaleElementBytes;
  static constexpr int kChunkBytes = wgmma_chunk_bytes(
      kRingLead, Tile::kBlockN, kScaleEntries, kScaleElementBytes,
      kZeroWords ? kZeroElementBytes : 0, kLongScaleChunks);
  static_assert(kChunkBytes ==
                    Tile::kBlockN * (kScaleWindowWords + kZeroWindowWords) * 16,
                "the chunk buffer is the scale windows, then the zero windows");
  // Bytes of the checkpoint scale (and zero-point) tensors: a window's last
  // word copies only what lies inside.
  static constexpr i64 kScaleTensorBytes =
      (kN / kScaleTileN) * kScaleColumns * kScaleElementBytes;
  static constexpr i64 kZeroTensorBytes =
      (kN / kScaleTileN) * kScaleColumns * kZeroElementBytes;
  static constexpr int kSharedBytes =
      wgmma_shared_bytes(Tile::kStages, kStageBytes, kChunkBytes);

  static_assert(kTokens == 8 || kTokens == 16 || kTokens == 32 ||
                    kTokens == 64 || kTokens == 128 || kTokens == 256,
                "token tiles of 8, 16, 32, 64, 128 or 256 (wgmma n)");
  static_assert(kWarpSplitK > 1 ||
                    (kRowBlocks >= 1 &&
                     Tile::kBlockN == kRowBlocks * kWgmmaRowsPerWarpgroup *
                                          Tile::kWarpgroups),
                "BN is a whole number of 64-row blocks per warpgroup");
  static_assert(
      kWarpSplitK == 1 ||
          ((kTokens == 8 || kTokens == 16 || kWarpgroupSlices) &&
           kRowUnits * kWarpSplitK == kWarps &&
           kUnitsKPerTile % kWarpSplitK == 0 && !Tile::kBulkWeights),
      "k-split warps: 8 or 16 tokens (mma.sync), or 16 / 32 with BN 64 "
      "(warpgroup slices on wgmma), one n-unit per warp and slice, whole "
      "k-units per slice, cp.async weights");
  static_assert(kN % Tile::kBlockN == 0 && kK % Tile::kBlockK == 0,
                "N and K must be multiples of the block tile");
  static_assert(Tile::kBlockK % kGemmUnitCols == 0, "BK is whole k-units");
  static_assert(kScaleTileK % 16 == 0, "a k16 step lies in one scale entry");
  static_assert(kScaleTileK >= Tile::kBlockK ? kScaleTileK % Tile::kBlockK == 0
                                             : Tile::kBlockK % kScaleTileK == 0,
                "a k-tile holds whole scale entries or lies in one");
  static_assert(kScaleTileK >= kUnitsKPerWarp * kGemmUnitCols
                    ? kScaleTileK % (kUnitsKPerWarp * kGemmUnitCols) == 0
                    : (kUnitsKPerWarp * kGemmUnitCols) % kScaleTileK == 0,
                "a warp's k-slice holds whole scale entries or lies in one "
                "(gemm/wgmma_tile_compute.cuh: wgmma_warp_scale_column)");
  static_assert(!Tile::kKMajorScales ||
                    (kScaleTileN == 1 && !kZeroWords &&
                     kChunkCols * Tile::kBlockN * kScaleElementBytes <=
                         kOffsetChunkZeros &&
                     (Tile::kBlockN * kScaleElementBytes) % 16 == 0),
                "k-major scales: one scale per row (groups or channel), no "
                "zero points, and a chunk's columns fit its row windows");
  static_assert(kScaleTileN > 0 && kN % kScaleTileN == 0,
                "N must be a multiple of the scale tile");
  static_assert(Tile::kStages >= 3,
                "the copy runs two tiles behind the wgmma reads");
  static_assert(kChunkTiles >= kAhead,
                "two chunk buffers: a chunk spans at least the ring's lead "
                "(the whole of K where the prologue copies all of it)");

  // The n-unit of the block (0 .. kRowUnits - 1) whose 16 rows warp `warp`
  // computes in row block r, and the k-slice of each tile it computes.
  HUMMINGD_HD static constexpr int warp_row_unit(int warp, int r) {
    return kWarpSplitK > 1 ? warp % kRowUnits
                           : ((warp >> 2) * kRowBlocks + r) * 4 + (warp & 3);
  }
  HUMMINGD_HD static constexpr int warp_k_slice(int warp) {
    return kWarpSplitK > 1 ? warp / kRowUnits : 0;
  }
};

}  // namespace hummingd::device
