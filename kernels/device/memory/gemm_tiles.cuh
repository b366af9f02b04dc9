#pragma once

// Global -> shared stage copies of the GEMM block tile and the shared ->
// register reads of the warp fragments. Device only.
//
// Activation stage: kBlockM rows of kBlockK 16-bit values; the 16-byte chunk
// c of row r sits at chunk position c ^ (r & 7), so that the 8 row addresses
// of every ldmatrix phase hit 8 different bank groups.
// Weight stage: for each of the block's kBlockN / 16 n-units, its
// kBlockK / 64 consecutive k-units, copied as one contiguous run (the global
// layout stores a unit row's k-units back to back).

#include "arch/async_copy.cuh"
#include "arch/ldmatrix.cuh"
#include "arch/platform.cuh"
#include "pack/gemm_layout.cuh"

namespace hummingd::device {

template <int kBlockK>
HUMMINGD_HD u32 a_stage_offset(int row, int chunk) {
  return static_cast<u32>(row * kBlockK * 2 + ((chunk ^ (row & 7)) << 4));
}

#if defined(__CUDA_ARCH__)

// Rows at or beyond `m` are zero-filled.
template <class Config>
HUMMINGD_DEVICE void copy_a_stage(u32 s_stage, const u16* g_x, i64 m, i64 m0,
                                  i64 k0, int thread) {
  constexpr int kBlockK = Config::Tile::kBlockK;
  constexpr int kChunksPerRow = kBlockK / 8;
  constexpr int kChunks = Config::Tile::kBlockM * kChunksPerRow;
  HUMMINGD_UNROLL
  for (int i = 0; i < (kChunks + Config::kThreads - 1) / Config::kThreads;
       ++i) {
    const int id = thread + i * Config::kThreads;
    if (kChunks % Config::kThreads != 0 && id >= kChunks) break;
    const int row = id / kChunksPerRow;
    const int chunk = id % kChunksPerRow;
    const bool valid = m0 + row < m;
    const u16* g_src =
        g_x + (valid ? m0 + row : 0) * Config::kK + k0 + chunk * 8;
    copy_16_async(s_stage + a_stage_offset<kBlockK>(row, chunk), g_src, valid);
  }
}

template <class Config>
HUMMINGD_DEVICE void copy_w_stage(u32 s_stage, const u32* g_weights,
                                  i64 n_unit0, i64 k_unit0, int thread) {
  constexpr int kRunBytes = Config::kUnitsKPerTile * Config::kUnitWords * 4;
  constexpr int kChunksPerRun = kRunBytes / 16;
  constexpr int kChunks =
      (Config::Tile::kBlockN / kGemmUnitRows) * kChunksPerRun;
  HUMMINGD_UNROLL
  for (int i = 0; i < (kChunks + Config::kThreads - 1) / Config::kThreads;
       ++i) {
    const int id = thread + i * Config::kThreads;
    if (kChunks % Config::kThreads != 0 && id >= kChunks) break;
    const int run = id / kChunksPerRun;
    const int chunk = id % kChunksPerRun;
    const u32* g_run =
        g_weights + ((n_unit0 + run) * Config::kUnitsKPerRow + k_unit0) *
                        Config::kUnitWords;
    copy_16_async(s_stage + run * kRunBytes + chunk * 16, g_run + chunk * 4,
                  true);
  }
}

// A operand of the m16 x k16 fragment at (row0, k-step) of the stage.
template <int kBlockK>
HUMMINGD_DEVICE void load_a_fragment(u32 (&r_a)[4], u32 s_stage, int row0,
                                     int k_step, int lane) {
  ldmatrix_x4(r_a, s_stage + a_stage_offset<kBlockK>(row0 + (lane & 15),
                                                     2 * k_step + (lane >> 4)));
}

// A lane's `kBits` words of the unit starting at s_unit.
template <int kBits>
HUMMINGD_DEVICE void load_lane_words(u32 (&r_words)[kBits], u32 s_unit,
                                     int lane) {
  const u32 base = s_unit + static_cast<u32>(lane * kBits * 4);
  if constexpr (kBits % 4 == 0) {
    HUMMINGD_UNROLL
    for (int w = 0; w < kBits; w += 4)
      load_shared_v4_at(base + 4 * w, r_words + w);
  } else {
    HUMMINGD_UNROLL
    for (int w = 0; w < kBits; ++w) r_words[w] = load_shared_u32(base + 4 * w);
  }
}

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
