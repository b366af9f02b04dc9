#pragma once

// One k-tile of the Hopper decode GEMM (gemm/wgmma_gemm.cuh): each warp
// decodes its 16 weight rows of every 64-row block straight into wgmma A
// registers, while the wgmmas of the last one or two k16 steps run
// (wait_group 1 or 2, kGroupsInFlight; at 16 and 32 tokens the steps go in
// pairs, one group per pair), so that the decode of step s overlaps the
// tensor cores' work on the steps before. At 8 tokens the
// same registers feed warp-level mma.sync m16n8k16 instead (sync_mma_step):
// half the tensor time per weight, and no fence, commit or wait.
//
// Two ways to apply the scales (WgmmaScalePlan):
//  - Pre-scaled: every operand pair is (q - z) * s in the activation type
//    (one more packed FMA per pair); wgmma accumulates into the totals.
//  - Deferred (decoders with unscaled operands, up to 32 accumulators per
//    thread, scale groups of >= 32 columns): the operands are q - z; each scale
//    period
//    ("fold": min(scale group, BK) columns) accumulates into a partial set,
//    started by the period's first wgmma with scale-d = 0, and is folded
//    into the totals as total += s * partial in fp32 at the next period's
//    first step (or pair of steps), after its decode and a wait_group 0 (ptxas
//    serializes every wgmma if ordinary instructions read accumulators
//    while any wgmma may be in flight, so the fold drains the pipe: one
//    tensor-core bubble per period, hidden behind a step's decode). Half
//    the decode instructions per weight, and no 16-bit rounding of the
//    scaled weight.
// Every step index below is a compile-time constant once the loops unroll,
// so fold points cost nothing at run time.

#include "arch/ldmatrix.cuh"
#include "arch/platform.cuh"
#include "arch/shared_memory.cuh"
#include "arch/wgmma.cuh"
#include "gemm/wgmma_config.cuh"
#include "memory/gemm_tiles.cuh"
#include "memory/wgmma_tiles.cuh"
#include "mma/warp_mma.cuh"
#include "numeric/fragment_decode.cuh"
#include "numeric/operand_decode.cuh"

namespace hummingd::device {

#if defined(HUMMINGD_HAS_WGMMA)

template <class Config>
struct WgmmaScalePlan {
  using Tile = typename Config::Tile;
  using Decoder = OperandDecoder<typename Config::Format>;
  // The partial set beside the totals fits the registers up to 32
  // accumulators per thread (the tiles that run two blocks per SM);
  // periods of one k16 step would drain the pipe at every step.
  // A tile may ask for pre-scaled operands (scales=pre): no drain of the
  // wgmma pipe per scale period, at one more packed FMA per pair.
  static constexpr bool kDeferred =
      !Tile::kPrescaled && Decoder::kUnscaledOperands &&
      Config::kAccumulators <= 32 && Config::kScaleTileK >= 32;
  // A period never spans two warps' k-slices (kWarpSplitK > 1).
  static constexpr int kSliceK = Tile::kBlockK / Config::kWarpSplitK;
  static constexpr int kFoldK = Config::kScaleTileK < kSliceK
                                    ? static_cast<int>(Config::kScaleTileK)
                                    : kSliceK;
  static constexpr int kStepsPerFold = kFoldK / 16;
  static_assert(kSliceK % kFoldK == 0, "a k-slice holds whole periods");
};

// The thread's accumulators: totals (the layout of arch/wgmma.cuh per
// 64-row block) and, with deferred scales, the current period's partial
// sums and the fp32 scales of their rows (g and g + 8 of the warp's 16
// rows).
template <class Config, bool kDeferred = WgmmaScalePlan<Config>::kDeferred>
struct WgmmaAccumulators {
  static constexpr int kR = Config::kRowBlocks;
  static constexpr int kT = Config::kTokens;
  static constexpr int kPartRows = kDeferred ? kR : 1;
  float total[kR][kT / 2];
  float part[kPartRows][kT / 2];
  float scale[kPartRows][2];

  HUMMINGD_DEVICE void clear() {
    HUMMINGD_UNROLL
    for (int r = 0; r < kR; ++r) {
      HUMMINGD_UNROLL
      for (int i = 0; i < kT / 2; ++i) total[r][i] = 0.0f;
    }
    HUMMINGD_UNROLL
    for (int r = 0; r < kPartRows; ++r) {
      HUMMINGD_UNROLL
      for (int i = 0; i < kT / 2; ++i) part[r][i] = 0.0f;
    }
  }

  // total += scale * part; every wgmma must have retired (wait_group 0).
  HUMMINGD_DEVICE void fold() {
    HUMMINGD_UNROLL
    for (int r = 0; r < kPartRows; ++r) {
      HUMMINGD_UNROLL
      for (int i = 0; i < kT / 2; ++i) {
        wgmma_fence_operand(part[r][i]);
        // Accumulator 4c + e holds row g + 8 (e / 2) (arch/wgmma.cuh).
        total[r][i] =
            __fmaf_rn(scale[r][(i >> 1) & 1], part[r][i], total[r][i]);
      }
    }
  }
};

// Where the tiles of one chunk find their scales and zero points: for
// each of the thread's rows (g and g + 8 of each row block), the shared
// address of the row's element at the chunk's first entry column, in the
// chunk buffer's scale windows and zero-point windows
// (memory/wgmma_tiles.cuh). Built once per chunk, so that reading an
// element is one add.
template <class Config>
struct WgmmaChunk {
  static constexpr int kR = Config::kRowBlocks;
  u32 s_scale[kR][2];
  u32 s_zero[Config::kZeroWords ? kR : 1][2];
  int first_col;
};

// The view of the chunk in s_buffer whose first k-tile is first_tile.
template <class Config>
HUMMINGD_DEVICE WgmmaChunk<Config> wgmma_chunk_view(u32 s_buffer,
                                                    int first_tile, i64 n0,
                                                    int warp, int lane) {
  constexpr int kR = Config::kRowBlocks;
  WgmmaChunk<Config> chunk;
  const i64 first_col = wgmma_chunk_first_column<Config>(first_tile);
  chunk.first_col = static_cast<int>(first_col);
  HUMMINGD_UNROLL
  for (int r = 0; r < kR; ++r) {
    HUMMINGD_UNROLL
    for (int j = 0; j < 2; ++j) {
      const int row_local =
          Config::warp_row_unit(warp, r) * 16 + (lane >> 2) + 8 * j;
      [[maybe_unused]] const i64 row = n0 + row_local;
      if constexpr (Config::Tile::kKMajorScales) {
        // The row's element of the chunk's first column.
        chunk.s_scale[r][j] =
            s_buffer + static_cast<u32>(row_local * Config::kScaleElementBytes);
      } else {
        chunk.s_scale[r][j] =
            s_buffer +
            static_cast<u32>(row_local * Config::kScaleWindowWords * 16) +
            wgmma_window_lead<Config, Config::kScaleElementBytes>(row,
                                                                  first_col);
      }
      if constexpr (Config::kZeroWords) {
        chunk.s_zero[r][j] =
            s_buffer + Config::kOffsetChunkZeros +
            static_cast<u32>(row_local * Config::kZeroWindowWords * 16) +
            wgmma_window_lead<Config, Config::kZeroElementBytes>(row,
                                                                 first_col);
      }
    }
  }
  return chunk;
}

// The element (scale, or zero point with kZero) of the thread's row
// g + 8 j of row block r at k column d of the warp's share of the tile
// whose first entry column is warp_col (wgmma_warp_scale_column, or on
// slice-ring tiles the same from WgmmaLaneOffsets::slice_k),
// zero-extended.
template <class Config, bool kZero>
HUMMINGD_DEVICE u32 load_row_element(const WgmmaChunk<Config>& chunk, int r,
                                     int j, int warp_col, int d) {
  constexpr int kBytes =
      kZero ? Config::kZeroElementBytes : Config::kScaleElementBytes;
  // Zero points keep the row windows (k-major tiles have none).
  constexpr int kColumnStride = kZero ? kBytes : Config::kScaleColumnStride;
  const int col = warp_col + d / static_cast<int>(Config::kScaleTileK);
  u32 s_row;
  if constexpr (kZero) {
    s_row = chunk.s_zero[r][j];
  } else {
    s_row = chunk.s_scale[r][j];
  }
  return load_shared_element<kBytes>(s_row +
                                     static_cast<u32>(col * kColumnStride));
}

template <class Config>
HUMMINGD_DEVICE typename OperandDecoder<typename Config::Format>::Entry
load_decoder_entry(const WgmmaChunk<Config>& chunk, int r, int j, int warp_col,
                   int d, bool with_scale) {
  using Decoder = OperandDecoder<typename Config::Format>;
  u32 raw_scale = 0;
  if (with_scale) {
    raw_scale = load_row_element<Config, false>(chunk, r, j, warp_col, d);
  }
  u32 raw_zero = 0;
  if constexpr (Config::kZeroWords) {
    raw_zero = load_row_element<Config, true>(chunk, r, j, warp_col, d);
  }
  return Decoder::prepare(raw_scale, raw_zero);
}

// kSteps consecutive k16 steps' wgmmas (m64nNk16, one per row block and
// step) behind one fence and in one group: the warpgroup meets at the fence
// and waits on the group once per kSteps steps. With deferred scales the
// period's first step starts the partial sums (scale-d = 0). Step g reads
// the activations 32 bytes (two 16-byte descriptor units) after step g - 1.
template <class Config, int kSteps>
HUMMINGD_DEVICE void wgmma_steps(
    WgmmaAccumulators<Config>& acc,
    const u32 (&r_a)[kSteps][Config::kRowBlocks][4], u64 desc_x,
    bool starts_fold) {
  constexpr int kT = Config::kTokens;
  constexpr ScalarType kType = Config::Format::kActivationType;
  wgmma_fence();
  HUMMINGD_UNROLL
  for (int g = 0; g < kSteps; ++g) {
    const u64 desc_step = desc_x + static_cast<u64>(2 * g);
    HUMMINGD_UNROLL
    for (int r = 0; r < Config::kRowBlocks; ++r) {
      if constexpr (!WgmmaScalePlan<Config>::kDeferred) {
        wgmma_rs<kT, kType>(acc.total[r], r_a[g][r], desc_step);
      } else if (g == 0 && starts_fold) {
        wgmma_rs<kT, kType, false>(acc.part[r], r_a[g][r], desc_step);
      } else {
        wgmma_rs<kT, kType, true>(acc.part[r], r_a[g][r], desc_step);
      }
    }
  }
  wgmma_commit();
}

// The same step on warp-level mma.sync m16n8k16 (8 tokens, and 16 with
// k-split warps that are not warpgroup slices): each warp's 16 rows of a row
// block are m16n8k16's A fragment, and its accumulators are m64nNk16's per warp
// (accumulators 4j .. 4j + 3: n8 tile j's C fragment), so only the B operand
// moves (r_b: ldmatrix'ed fragments of a step pair per n8 tile, half
// `pair_half` of them for this step).
template <class Config>
HUMMINGD_DEVICE void sync_mma_step(WgmmaAccumulators<Config>& acc,
                                   const u32 (&r_a)[Config::kRowBlocks][4],
                                   const u32 (&r_b)[Config::kTokens / 8][4],
                                   int pair_half, bool starts_fold) {
  static_assert(Config::kTokens == 8 || Config::kTokens == 16,
                "one or two m16n8k16 tiles per step");
  constexpr int kNTiles = Config::kTokens / 8;
  constexpr ScalarType kType = Config::Format::kActivationType;
  static_assert(kType == ScalarType::kFp16 || kType == ScalarType::kBf16,
                "16-bit operands");
  HUMMINGD_UNROLL
  for (int j = 0; j < kNTiles; ++j) {
    const u32 r_b_step[2] = {r_b[j][2 * pair_half], r_b[j][2 * pair_half + 1]};
    HUMMINGD_UNROLL
    for (int r = 0; r < Config::kRowBlocks; ++r) {
      if constexpr (!WgmmaScalePlan<Config>::kDeferred) {
        mma_k16<kType>(reinterpret_cast<float(&)[4]>(acc.total[r][4 * j]),
                       r_a[r], r_b_step);
      } else {
        float(&r_c)[4] = reinterpret_cast<float(&)[4]>(acc.part[r][4 * j]);
        if (starts_fold) {
          // ptxas turns these into the MMA's zero C operand.
          HUMMINGD_UNROLL
          for (int i = 0; i < 4; ++i) r_c[i] = 0.0f;
        }
        mma_k16<kType>(r_c, r_a[r], r_b_step);
      }
    }
  }
}

// The ldmatrix.x4 row of `lane` in a step pair of a token panel of the
// swizzled activation tile: lane l gives the row of token l % 8 at 16-byte
// chunk l / 8 (chunk c of token t lies at c ^ t); the panel's second step
// pair is chunk + 4, this XOR 64.
HUMMINGD_DEVICE u32 wgmma_ldsm_lane_offset(int lane) {
  return static_cast<u32>((lane & 7) * kWgmmaSwizzleRowBytes +
                          (((lane >> 3) ^ (lane & 7)) << 4));
}

// A k-split warp's offsets that no k-tile changes: where its lane reads
// the warp's first unit's weight words within a stage (per row block), the
// ldmatrix row of its lane in the warp's first 64-column activation panel
// (and the same in the panel's second step pair), and the first k column
// of its k-slice within a tile. Computed once per kernel and held opaque
// on slice-ring tiles (WgmmaConfig::kSliceRings): left to the optimizer,
// their k-loops rebuilt them from the thread index at every k-tile (~10
// of ~190 SASS a tile on the 16-row tiles), and held they ran 0.96-0.98x
// on the 4-bit 16-row tiles past K = 8192, 0.97-1.01x on the others
// (bench/decode-notes.md v103). The other tiles compute theirs in place:
// the 8-bit 8x32x512 k-split tile (two n-units, the block barrier every
// tile) ran 1.007-1.023x slower with them held though its loop shrank 6%,
// and the loops of tiles without k-split warps grew (the 64-token 8-bit
// ones by 10%, two more registers).
template <class Config>
struct WgmmaLaneOffsets {
  u32 words[Config::kRowBlocks];
  u32 ldsm[2];
  int slice_k;
};

template <class Config>
HUMMINGD_DEVICE WgmmaLaneOffsets<Config> wgmma_lane_offsets(int warp,
                                                            int lane) {
  auto held = [](u32 value) {
    return Config::kSliceRings ? opaque_register(value) : value;
  };
  const int ku0 = Config::warp_k_slice(warp) * Config::kUnitsKPerWarp;
  WgmmaLaneOffsets<Config> offsets;
  HUMMINGD_UNROLL
  for (int r = 0; r < Config::kRowBlocks; ++r) {
    const int unit_local = Config::warp_row_unit(warp, r);
    offsets.words[r] = held(static_cast<u32>(
        Config::kOffsetW +
        (unit_local * Config::kUnitsKPerTile + ku0) * Config::kUnitWords * 4 +
        lane * Config::kBits * 4));
  }
  // The second step pair of a 64-column panel is bit 6 of the lane offset,
  // which the panel's multiple of 128 bytes leaves alone.
  const u32 lane_offset = wgmma_ldsm_lane_offset(lane);
  const u32 panel =
      static_cast<u32>(ku0 * Config::kTokens * kWgmmaSwizzleRowBytes);
  offsets.ldsm[0] = held(panel + lane_offset);
  offsets.ldsm[1] = held(panel + (lane_offset ^ 64u));
  offsets.slice_k = static_cast<int>(held(static_cast<u32>(
      Config::warp_k_slice(warp) * Config::kUnitsKPerWarp * kGemmUnitCols)));
  return offsets;
}

// Computes warp's share of the k-tile at column k_tile0 (its k-slice with
// k-split warps, else all of it) from the stage at s_stage, whose own wgmma
// descriptor desc_stage must be (built by the caller: once per ring where
// the slots are compile-time), with the scales of `chunk`. has_previous_tile:
// an earlier tile of this split ran (its last period is folded at this tile's
// first step). lanes: the thread's WgmmaLaneOffsets (wgmma_lane_offsets, once
// per kernel), read only on slice-ring tiles; the others compute the same from
// warp and lane.
template <class Config>
HUMMINGD_DEVICE void wgmma_compute_tile(WgmmaAccumulators<Config>& acc,
                                        u32 s_stage, u64 desc_stage,
                                        const WgmmaChunk<Config>& chunk,
                                        int k_tile0, bool has_previous_tile,
                                        int warp, int lane,
                                        const WgmmaLaneOffsets<Config>& lanes) {
  using Format = typename Config::Format;
  using Decoder = OperandDecoder<Format>;
  using Plan = WgmmaScalePlan<Config>;
  using Entry = typename Decoder::Entry;
  constexpr int kR = Config::kRowBlocks;
  // Pre-scaled: one entry per unit when a scale entry spans >= 64 columns,
  // else one per k16 step.
  constexpr int kEntriesPerUnit =
      Plan::kDeferred || Config::kScaleTileK >= 64 ? 1 : 4;
  // The descriptor of the warp's k-slice of the stage (its first 64-column
  // activation panel; the stage itself without k-split warps): the slice's
  // offset is added once per tile, so that each step adds a constant.
  const u64 desc_slice =
      desc_stage +
      static_cast<u64>(
          static_cast<u32>(Config::warp_k_slice(warp)) *
          static_cast<u32>(Config::kUnitsKPerWarp * Config::kTokens *
                           kWgmmaSwizzleRowBytes / 16));
  // 8 tokens: warp-level mma.sync m16n8k16 in place of m64n8k16, which
  // costs as much tensor time as m64n16k16 (half the weight per unit of it;
  // bench/results/mma-sync-probe-2026-11-30.txt; A/B q in decode-notes v41:
  // 0.970-1.004x). B fragments by ldmatrix from the same swizzled tile
  // (wgmma_ldsm_lane_offset).
  // With k-split warps at 16 tokens too (two n8 tiles per step).
  // Not where a k-slice is a whole warpgroup (Config::kWarpgroupSlices):
  // its four warps' n-units are one m64 wgmma's A operand.
  constexpr bool kSyncMma = Config::kTokens == 8 || (Config::kWarpSplitK > 1 &&
                                                     !Config::kWarpgroupSlices);
  constexpr int kBTiles = kSyncMma ? Config::kTokens / 8 : 1;
  // Groups of wgmmas (one per row block of a step) a warpgroup leaves in
  // flight while it decodes the next step's A registers: two from 64
  // tokens, where the loop waits on the tensor pipe (decode-notes v79-v80),
  // one below (v61, v81: two were neutral at 16 and 32 tokens; where the
  // steps go in pairs, below, one pair). The ring reuses tile t - 2's slot
  // after tile t - 1; a tile has at least four k16 steps (one 64-column unit),
  // so with at most two in flight every wgmma of tile t - 2 has retired by
  // then.
  constexpr int kGroupsInFlight = Config::kTokens >= 64 ? 2 : 1;
  // At 16 and 32 tokens the steps go in pairs: one fence, one group and
  // one wait per two steps (half the warpgroup's meetings at the fence and
  // half its waits), a pair decoded while the previous pair's group runs
  // (one pair in flight at the wait; decode-notes v97: 0.97-1.00x, the
  // 4-bit loops 5-6% shorter). The ring rule holds: a tile's four or more
  // steps make at least two pairs, and the wait before its second pair
  // retires every group of the tile before. Not at 64 tokens, where the
  // tensor pipe binds and pairs measured 1.01-1.025x slower (the first
  // wgmma of a pair waits for both decodes), nor on two row blocks per
  // warp (16x256 k-major tiles), whose steps already put two wgmmas behind
  // each fence and where two more A sets spill.
  constexpr bool kStepPairs = !kSyncMma && kR == 1 && Config::kTokens <= 32;
  constexpr int kStepsPerGroup = kStepPairs ? 2 : 1;
  static_assert(!Plan::kDeferred || Plan::kStepsPerFold % kStepsPerGroup == 0,
                "a scale period starts a group");
  const u32 ldsm_lane_offset = wgmma_ldsm_lane_offset(lane);
  // Deferred: the current fold's decoder entries (zero points only).
  Entry r_fold_entry[kR][2];
  // The warp's k-units are ku0 .. ku0 + kUnitsKPerWarp - 1 (a constant 0
  // without k-split warps); step and period indices count from ku0, so fold
  // points stay compile-time.
  const int ku0 = Config::warp_k_slice(warp) * Config::kUnitsKPerWarp;
  const int warp_col =
      Config::kSliceRings
          ? static_cast<int>(wgmma_scale_column<Config>(
                static_cast<u32>(k_tile0) + static_cast<u32>(lanes.slice_k))) -
                chunk.first_col
          : wgmma_warp_scale_column<Config>(k_tile0, Config::warp_k_slice(warp),
                                            chunk.first_col);
  // The lane words of unit ku of every row block; unit ku + 1's are loaded
  // while unit ku decodes (a double buffer, compile-time indexed by the
  // warp's unit count ku_w).
  u32 r_words[2][kR][Config::kBits];
  auto load_unit_words = [&](int ku_w) {
    HUMMINGD_UNROLL
    for (int r = 0; r < kR; ++r) {
      if constexpr (Config::kSliceRings) {
        load_lane_words<Config::kBits>(
            r_words[ku_w & 1][r],
            s_stage + lanes.words[r] + ku_w * Config::kUnitWords * 4, 0);
      } else {
        const int unit_local = Config::warp_row_unit(warp, r);
        load_lane_words<Config::kBits>(
            r_words[ku_w & 1][r],
            s_stage + Config::kOffsetW +
                (unit_local * Config::kUnitsKPerTile + ku0 + ku_w) *
                    Config::kUnitWords * 4,
            lane);
      }
    }
  };
  load_unit_words(0);
  HUMMINGD_UNROLL
  for (int ku_w = 0; ku_w < Config::kUnitsKPerWarp; ++ku_w) {
    const int ku = ku0 + ku_w;
    if (ku_w + 1 < Config::kUnitsKPerWarp) load_unit_words(ku_w + 1);
    Entry r_unit_entry[kR][kEntriesPerUnit][2];
    u32 r_b[kBTiles][4];  // kSyncMma: B fragments of a step pair
    HUMMINGD_UNROLL
    for (int r = 0; r < kR; ++r) {
      if constexpr (!Plan::kDeferred) {
        HUMMINGD_UNROLL
        for (int ee = 0; ee < kEntriesPerUnit; ++ee) {
          HUMMINGD_UNROLL
          for (int j = 0; j < 2; ++j) {
            r_unit_entry[r][ee][j] = load_decoder_entry<Config>(
                chunk, r, j, warp_col, ku_w * 64 + ee * 16,
                /*with_scale=*/true);
          }
        }
      }
    }
    HUMMINGD_UNROLL
    for (int s0 = 0; s0 < 4; s0 += kStepsPerGroup) {
      const int q_w = ku_w * 4 + s0;
      const bool starts_fold = q_w % Plan::kStepsPerFold == 0;
      // The group kGroupsInFlight + 1 before this one read the A registers
      // this one rewrites.
      if constexpr (!kSyncMma) wgmma_wait<kGroupsInFlight>();
      // Deferred: the new period's scales and decoder entries (zero
      // points), loaded before the decode that hides their latency.
      float r_new_scale[kR][2];
      if constexpr (Plan::kDeferred) {
        if (starts_fold) {
          HUMMINGD_UNROLL
          for (int r = 0; r < kR; ++r) {
            HUMMINGD_UNROLL
            for (int j = 0; j < 2; ++j) {
              r_new_scale[r][j] = prepare_fragment_scale<Format>(
                  load_row_element<Config, false>(chunk, r, j, warp_col,
                                                  q_w * 16));
              r_fold_entry[r][j] = load_decoder_entry<Config>(
                  chunk, r, j, warp_col, q_w * 16, /*with_scale=*/false);
            }
          }
        }
      }
      u32 r_a[kStepsPerGroup][kR][4];
      HUMMINGD_UNROLL
      for (int g = 0; g < kStepsPerGroup; ++g) {
        const int s = s0 + g;
        HUMMINGD_UNROLL
        for (int r = 0; r < kR; ++r) {
          const u32* words = r_words[ku_w & 1][r];
          if constexpr (Plan::kDeferred) {
            const Entry& e0 = r_fold_entry[r][0];
            const Entry& e1 = r_fold_entry[r][1];
            r_a[g][r][0] = Decoder::unscaled_pair(words, s, 0, 0, e0);
            r_a[g][r][1] = Decoder::unscaled_pair(words, s, 1, 0, e1);
            r_a[g][r][2] = Decoder::unscaled_pair(words, s, 0, 1, e0);
            r_a[g][r][3] = Decoder::unscaled_pair(words, s, 1, 1, e1);
          } else {
            const int ee = kEntriesPerUnit == 1 ? 0 : s;
            const Entry& e0 = r_unit_entry[r][ee][0];
            const Entry& e1 = r_unit_entry[r][ee][1];
            r_a[g][r][0] = Decoder::pair(words, s, 0, 0, e0);
            r_a[g][r][1] = Decoder::pair(words, s, 1, 0, e1);
            r_a[g][r][2] = Decoder::pair(words, s, 0, 1, e0);
            r_a[g][r][3] = Decoder::pair(words, s, 1, 1, e1);
          }
        }
      }
      if constexpr (Plan::kDeferred) {
        if (starts_fold) {
          // The previous period's last groups (up to kGroupsInFlight of
          // them, the one before this among them) may still be in flight.
          if (q_w > 0 || has_previous_tile) {
            if constexpr (!kSyncMma) wgmma_wait<0>();
            acc.fold();
          }
          HUMMINGD_UNROLL
          for (int r = 0; r < kR; ++r) {
            acc.scale[r][0] = r_new_scale[r][0];
            acc.scale[r][1] = r_new_scale[r][1];
          }
        }
      }
      if constexpr (kSyncMma) {
        const int s = s0;
        if (s % 2 == 0) {
          // Token rows 8j .. 8j + 7 of the panel (their swizzle is the
          // row's, so the lane offset holds).
          HUMMINGD_UNROLL
          for (int j = 0; j < kBTiles; ++j) {
            if constexpr (Config::kSliceRings) {
              ldmatrix_x4(r_b[j], s_stage + lanes.ldsm[s == 0 ? 0 : 1] +
                                      static_cast<u32>(
                                          (ku_w * Config::kTokens + 8 * j) *
                                          kWgmmaSwizzleRowBytes));
            } else {
              ldmatrix_x4(
                  r_b[j],
                  s_stage +
                      static_cast<u32>((ku * Config::kTokens + 8 * j) *
                                       kWgmmaSwizzleRowBytes) +
                      (s == 0 ? ldsm_lane_offset : ldsm_lane_offset ^ 64u));
            }
          }
        }
        sync_mma_step<Config>(acc, r_a[0], r_b, s & 1, starts_fold);
      } else {
        // The start address is the descriptor's low field (16-byte units);
        // the stage is 1024-aligned, so adding the panel and k16 offsets
        // never carries out of it.
        wgmma_steps<Config, kStepsPerGroup>(
            acc, r_a,
            desc_slice + static_cast<u64>(
                             (ku_w * Config::kTokens * kWgmmaSwizzleRowBytes +
                              s0 * 32) >>
                             4),
            starts_fold);
      }
    }
  }
}

#endif  // HUMMINGD_HAS_WGMMA

}  // namespace hummingd::device
