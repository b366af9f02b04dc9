#pragma once

// WNA16 dense GEMM skeleton: Y (M x N) = X (M x K) . W^T (+ bias) with
// 16-bit activations, weights in fragment order (pack/gemm_layout.cuh),
// fp32 accumulation. Block (bm, bn, split) owns output rows
// [bm BM, bm BM + BM) x columns [bn BN, bn BN + BN) over its split's
// k-tiles; a kStages-deep cp.async pipeline feeds shared memory; each warp
// decodes its weight fragments straight into mma B registers
// (numeric/fragment_decode.cuh) and multiplies them with ldmatrix'ed
// activation fragments. Split-K partials meet in the epilogue.

#include "arch/async_copy.cuh"
#include "arch/platform.cuh"
#include "arch/shared_memory.cuh"
#include "epilogue/gemm_epilogue.cuh"
#include "gemm/wna16_args.cuh"
#include "gemm/wna16_config.cuh"
#include "memory/gemm_tiles.cuh"
#include "memory/unit_scales.cuh"
#include "mma/warp_mma.cuh"
#include "numeric/fragment_decode.cuh"
#include "schedule/split_k.cuh"

namespace hummingd::device {

#if defined(__CUDA_ARCH__)

template <class Config>
struct Wna16Block {
  using Tile = typename Config::Tile;
  using Format = typename Config::Format;
  float acc[Config::kMFragments][Config::kNFragments][4];
};

// One k-tile of one warp from shared stage s_stage.
template <class Config>
HUMMINGD_DEVICE void wna16_compute_tile(Wna16Block<Config>& block,
                                        const GemmArgs& args, u32 s_stage,
                                        i64 n_unit0, int k_tile, int warp_m,
                                        int warp_n, int lane) {
  using Tile = typename Config::Tile;
  using Format = typename Config::Format;
  constexpr int kBits = Config::kBits;
  const u32 s_a = s_stage;
  const u32 s_w = s_stage + Config::kStageABytes;
  HUMMINGD_UNROLL
  for (int uk = 0; uk < Config::kUnitsKPerTile; ++uk) {
    u32 r_words[Config::kUnitsN][kBits];
    UnitScales<Config> r_scales[Config::kUnitsN];
    const i64 k0 = static_cast<i64>(k_tile) * Tile::kBlockK + uk * 64;
    HUMMINGD_UNROLL
    for (int u = 0; u < Config::kUnitsN; ++u) {
      const int unit_n = warp_n * Config::kUnitsN + u;
      load_lane_words<kBits>(
          r_words[u],
          s_w + (unit_n * Config::kUnitsKPerTile + uk) * Config::kUnitWords * 4,
          lane);
      load_unit_scales<Config>(args.scales, args.zero_points,
                               (n_unit0 + unit_n) * 16 + (lane >> 2), k0,
                               r_scales[u]);
    }
    HUMMINGD_UNROLL
    for (int s = 0; s < 4; ++s) {
      u32 r_a[Config::kMFragments][4];
      HUMMINGD_UNROLL
      for (int mf = 0; mf < Config::kMFragments; ++mf) {
        load_a_fragment<Tile::kBlockK>(
            r_a[mf], s_a, warp_m * Config::kWarpM + mf * 16, uk * 4 + s, lane);
      }
      HUMMINGD_UNROLL
      for (int u = 0; u < Config::kUnitsN; ++u) {
        constexpr int kE = UnitScales<Config>::kEntriesK;
        const int e = kE == 1 ? 0 : s;
        u32 r_b[2][2];
        decode_fragment_step<Format>(r_words[u], s, r_scales[u].scale[e],
                                     r_scales[u].zero[e], r_b);
        HUMMINGD_UNROLL
        for (int mf = 0; mf < Config::kMFragments; ++mf) {
          HUMMINGD_UNROLL
          for (int j = 0; j < 2; ++j) {
            mma_k16<Format::kActivationType>(block.acc[mf][2 * u + j], r_a[mf],
                                             r_b[j]);
          }
        }
      }
    }
  }
}

template <class Config>
HUMMINGD_DEVICE void run_wna16_gemm(const GemmArgs& args, u32 thread,
                                    u32 block_m, u32 block_n, u32 split,
                                    u32 splits) {
  using Tile = typename Config::Tile;
  using Format = typename Config::Format;
  extern __shared__ __align__(16) u8 s_dynamic[];
  const int lane = static_cast<int>(thread & 31u);
  const int warp = static_cast<int>(thread >> 5);
  const int warp_m = warp / Tile::kWarpsN;
  const int warp_n = warp % Tile::kWarpsN;
  const i64 m = args.m;
  const i64 m0 = static_cast<i64>(block_m) * Tile::kBlockM;
  const i64 n_unit0 = static_cast<i64>(block_n) * (Tile::kBlockN / 16);
  const KTileRange range = split_k_range(Config::kKTiles, split, splits);
  const int tiles = range.end - range.begin;
  const u32 s_base = shared_address_of(s_dynamic);
  const u16* g_x = static_cast<const u16*>(args.x);

  Wna16Block<Config> block;
  HUMMINGD_UNROLL
  for (int mf = 0; mf < Config::kMFragments; ++mf) {
    HUMMINGD_UNROLL
    for (int nf = 0; nf < Config::kNFragments; ++nf) {
      HUMMINGD_UNROLL
      for (int e = 0; e < 4; ++e) block.acc[mf][nf][e] = 0.0f;
    }
  }

  auto copy_stage = [&](int tile) {
    const u32 s_stage = s_base + (tile % Tile::kStages) * Config::kStageBytes;
    const int k_tile = range.begin + tile;
    copy_a_stage<Config>(s_stage, g_x, m, m0,
                         static_cast<i64>(k_tile) * Tile::kBlockK,
                         static_cast<int>(thread));
    copy_w_stage<Config>(s_stage + Config::kStageABytes, args.weights, n_unit0,
                         static_cast<i64>(k_tile) * Config::kUnitsKPerTile,
                         static_cast<int>(thread));
  };

  // One commit per pipeline slot, empty or not, keeps the group count that
  // async_copy_wait relies on uniform.
  HUMMINGD_UNROLL
  for (int t = 0; t < Tile::kStages - 1; ++t) {
    if (t < tiles) copy_stage(t);
    async_copy_commit();
  }
  for (int t = 0; t < tiles; ++t) {
    async_copy_wait<Tile::kStages - 2>();
    __syncthreads();  // tile t landed; slot (t - 1) is free again
    if (t + Tile::kStages - 1 < tiles) copy_stage(t + Tile::kStages - 1);
    async_copy_commit();
    wna16_compute_tile<Config>(
        block, args, s_base + (t % Tile::kStages) * Config::kStageBytes,
        n_unit0, range.begin + t, warp_m, warp_n, lane);
  }
  async_copy_wait<0>();

  if (splits > 1) {
    float(&r_flat)[Config::kAccumulators] =
        reinterpret_cast<float(&)[Config::kAccumulators]>(block.acc);
    if (!reduce_split_k_tile<Config::kThreads, Tile::kBlockM, Tile::kBlockN,
                             Config::kN>(r_flat, args.workspace,
                                         args.split_counters, block_m, block_n,
                                         split, splits, thread)) {
      return;
    }
  }

  const int g = lane >> 2;
  const int t4 = lane & 3;
  HUMMINGD_UNROLL
  for (int mf = 0; mf < Config::kMFragments; ++mf) {
    HUMMINGD_UNROLL
    for (int nf = 0; nf < Config::kNFragments; ++nf) {
      const i64 col =
          (n_unit0 + warp_n * Config::kUnitsN) * 16 + nf * 8 + 2 * t4;
      HUMMINGD_UNROLL
      for (int half = 0; half < 2; ++half) {
        const i64 row = m0 + warp_m * Config::kWarpM + mf * 16 + g + 8 * half;
        store_output_pair<Format, Config::kN>(
            args.y, args.secondary_scale, args.bias, m, row, col,
            block.acc[mf][nf][2 * half], block.acc[mf][nf][2 * half + 1]);
      }
    }
  }
}

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
