#pragma once

// Hopper decode GEMM skeleton (sm_90a): Y (M x N) = X (M x K) . W^T for
// the small M of token generation, computed as Y^T = W . X^T so that the
// weights fill wgmma's 64-row A operand and the few tokens its N (8..64).
// A k-tile moves global -> shared by cp.async (activations in the swizzled
// K-major layout wgmma reads, weight units, scale words) through a
// kStages-deep ring; tile t + kStages - 2 is copied while tile t computes
// (not t + kStages - 1: the wgmma of tile t - 1 may still read its slot).
// Each warp decodes its own 16 weight rows straight into A registers
// (numeric/operand_decode.cuh), double-buffered per k16 step so that the
// decode of step s overlaps the tensor cores' work on step s - 1.
// Split-K partials meet in the epilogue as in the mma.sync skeleton.

#include "arch/async_copy.cuh"
#include "arch/platform.cuh"
#include "arch/wgmma.cuh"
#include "epilogue/gemm_epilogue.cuh"
#include "gemm/wgmma_config.cuh"
#include "gemm/wna16_args.cuh"
#include "memory/gemm_tiles.cuh"
#include "memory/wgmma_tiles.cuh"
#include "numeric/operand_decode.cuh"
#include "schedule/split_k.cuh"

namespace hummingd::device {

#if defined(HUMMINGD_HAS_WGMMA)

// Scale entries of one weight unit (64 columns) as the decoder wants them:
// one per unit when an entry spans >= 64 columns, else one per k16 step.
template <class Config>
struct UnitEntries {
  using Decoder = OperandDecoder<typename Config::Format>;
  static constexpr int kPerUnit = Config::kScaleTileK >= 64 ? 1 : 4;
  typename Decoder::Entry entry[kPerUnit][2];
};

template <class Config>
HUMMINGD_DEVICE void load_unit_entries(UnitEntries<Config>& r_out, u32 s_stage,
                                       i64 n0, int unit_local, i64 k_tile0,
                                       int ku, int lane) {
  using Format = typename Config::Format;
  using Decoder = OperandDecoder<Format>;
  HUMMINGD_UNROLL
  for (int ee = 0; ee < UnitEntries<Config>::kPerUnit; ++ee) {
    const int k_local = ku * 64 + ee * 16;
    const int e = Config::kScaleEntries == 1
                      ? 0
                      : static_cast<int>(k_local / Config::kScaleTileK);
    HUMMINGD_UNROLL
    for (int j = 0; j < 2; ++j) {
      const int row_local = unit_local * 16 + (lane >> 2) + 8 * j;
      const i64 entry =
          ((n0 + row_local) / Config::kScaleTileN) * Config::kScaleColumns +
          (k_tile0 + k_local) / Config::kScaleTileK;
      const u32 word_index =
          static_cast<u32>(row_local * Config::kScaleEntries + e) * 4u;
      const u32 raw_scale = element_of_word<Config::kScaleElementBytes>(
          load_shared_u32(s_stage + Config::kOffsetScales + word_index), entry);
      u32 raw_zero = 0;
      if constexpr (Config::kZeroWords) {
        raw_zero = element_of_word<Config::kZeroElementBytes>(
            load_shared_u32(s_stage + Config::kOffsetZeros + word_index),
            entry);
      }
      r_out.entry[ee][j] = Decoder::prepare(raw_scale, raw_zero);
    }
  }
}

template <class Config>
HUMMINGD_DEVICE void wgmma_compute_tile(
    float (&r_acc)[Config::kRowBlocks][Config::kTokens / 2], u32 s_stage,
    i64 n0, i64 k_tile0, int warpgroup, int warp_in_group, int lane) {
  using Format = typename Config::Format;
  using Decoder = OperandDecoder<Format>;
  constexpr int kR = Config::kRowBlocks;
  const u64 desc_stage = wgmma_descriptor_k_major_sw128(s_stage);
  HUMMINGD_UNROLL
  for (int ku = 0; ku < Config::kUnitsKPerTile; ++ku) {
    u32 r_words[kR][Config::kBits];
    UnitEntries<Config> r_entries[kR];
    HUMMINGD_UNROLL
    for (int r = 0; r < kR; ++r) {
      const int unit_local = (warpgroup * kR + r) * 4 + warp_in_group;
      load_lane_words<Config::kBits>(
          r_words[r],
          s_stage + Config::kOffsetW +
              (unit_local * Config::kUnitsKPerTile + ku) * Config::kUnitWords *
                  4,
          lane);
      load_unit_entries<Config>(r_entries[r], s_stage, n0, unit_local, k_tile0,
                                ku, lane);
    }
    HUMMINGD_UNROLL
    for (int s = 0; s < 4; ++s) {
      // The wgmma of step s - 2 read the A registers this step rewrites.
      wgmma_wait<1>();
      u32 r_a[kR][4];
      HUMMINGD_UNROLL
      for (int r = 0; r < kR; ++r) {
        const int ee = UnitEntries<Config>::kPerUnit == 1 ? 0 : s;
        const auto& e0 = r_entries[r].entry[ee][0];
        const auto& e1 = r_entries[r].entry[ee][1];
        r_a[r][0] = Decoder::pair(r_words[r], s, 0, 0, e0);
        r_a[r][1] = Decoder::pair(r_words[r], s, 1, 0, e1);
        r_a[r][2] = Decoder::pair(r_words[r], s, 0, 1, e0);
        r_a[r][3] = Decoder::pair(r_words[r], s, 1, 1, e1);
      }
      wgmma_fence();
      // The start address is the descriptor's low field (16-byte units);
      // the stage is 1024-aligned, so adding the panel and k16 offsets
      // never carries out of it.
      const u64 desc_x =
          desc_stage +
          static_cast<u64>(
              (ku * Config::kTokens * kWgmmaSwizzleRowBytes + s * 32) >> 4);
      HUMMINGD_UNROLL
      for (int r = 0; r < kR; ++r) {
        wgmma_rs<Config::kTokens, Format::kActivationType>(r_acc[r], r_a[r],
                                                           desc_x);
      }
      wgmma_commit();
    }
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
  const int warpgroup = warp >> 2;
  const int warp_in_group = warp & 3;
  const i64 m = args.m;
  const i64 m0 = static_cast<i64>(block_m) * kT;
  const i64 n0 = static_cast<i64>(block_n) * Tile::kBlockN;
  const KTileRange range = split_k_range(Config::kKTiles, split, splits);
  const int tiles = range.end - range.begin;
  // wgmma's swizzle atoms must be 1024-byte aligned; the launch reserves
  // the slack (wgmma_shared_bytes).
  const u32 s_base = (shared_address_of(s_dynamic) + (kWgmmaSharedAlign - 1)) &
                     ~static_cast<u32>(kWgmmaSharedAlign - 1);
  float r_acc[kR][kT / 2];
  HUMMINGD_UNROLL
  for (int r = 0; r < kR; ++r) {
    HUMMINGD_UNROLL
    for (int i = 0; i < kT / 2; ++i) r_acc[r][i] = 0.0f;
  }

  const WgmmaStageCopier<Config> copier(args, m0, n0, range.begin,
                                        static_cast<int>(thread));
  auto copy_stage = [&](int tile) {
    copier.copy(s_base + (tile % Tile::kStages) * Config::kStageBytes, tile,
                range.begin);
  };

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
  constexpr int kAhead = Tile::kStages - 2;
  const u32 s_slot0 = s_base;
  HUMMINGD_UNROLL
  for (int t = 0; t < kAhead; ++t) {
    if (t < tiles) {
      copier.copy_weights(s_slot0 + t * Config::kStageBytes, t, range.begin);
    }
    if (t + 1 < kAhead) async_copy_commit();
  }
  grid_dependency_wait();
  HUMMINGD_UNROLL
  for (int t = 0; t < kAhead; ++t) {
    if (t < tiles) {
      copier.copy_activations(s_slot0 + t * Config::kStageBytes, t);
    }
  }
  async_copy_commit();
  for (int t = 0; t < tiles; ++t) {
    if (t == 0) {
      async_copy_wait<0>();
    } else {
      async_copy_wait<kAhead - 1>();
    }
    __syncthreads();
    if (t + kAhead < tiles) copy_stage(t + kAhead);
    async_copy_commit();
    wgmma_compute_tile<Config>(
        r_acc, s_base + (t % Tile::kStages) * Config::kStageBytes, n0,
        static_cast<i64>(range.begin + t) * Tile::kBlockK, warpgroup,
        warp_in_group, lane);
  }
  wgmma_wait<0>();
  async_copy_wait<0>();
  HUMMINGD_UNROLL
  for (int r = 0; r < kR; ++r) {
    HUMMINGD_UNROLL
    for (int i = 0; i < kT / 2; ++i) wgmma_fence_operand(r_acc[r][i]);
  }

  if (splits > 1) {
    float(&r_flat)[Config::kAccumulators] =
        reinterpret_cast<float(&)[Config::kAccumulators]>(r_acc);
    if (!reduce_split_k_tile<Config::kThreads, kT, Tile::kBlockN, Config::kN>(
            r_flat, args.workspace, args.split_counters, block_m, block_n,
            split, splits, thread)) {
      return;
    }
  }

  const int g = lane >> 2;
  const int t4 = lane & 3;
  HUMMINGD_UNROLL
  for (int r = 0; r < kR; ++r) {
    const i64 col0 = n0 + (warpgroup * kR + r) * kWgmmaRowsPerWarpgroup +
                     warp_in_group * 16 + g;
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
}

#endif  // HUMMINGD_HAS_WGMMA

}  // namespace hummingd::device
