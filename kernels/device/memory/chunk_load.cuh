#pragma once

// Global -> register movement for a thread's own contiguous chunk of words,
// using the widest vector access the chunk's alignment allows.

#include "arch/global_memory.cuh"
#include "arch/platform.cuh"

namespace hummingd::device {

// Words per access for chunks of kWords words laid end to end from a 16-byte
// aligned base: chunk c starts at byte 4*kWords*c, so the access may be as
// wide as the largest power of two (<= 4 words) dividing kWords.
template <int kWords>
inline constexpr int kChunkVectorWords = kWords % 4 == 0   ? 4
                                         : kWords % 2 == 0 ? 2
                                                           : 1;

// (kWords) <- g_src[0, kWords)
template <int kWords>
HUMMINGD_HD void load_chunk(const u32* g_src, u32 (&r_dst)[kWords]) {
  constexpr int kVector = kChunkVectorWords<kWords>;
  HUMMINGD_UNROLL
  for (int i = 0; i < kWords; i += kVector) {
    if constexpr (kVector == 4) {
      load_global_nc_v4(g_src + i, r_dst + i);
    } else if constexpr (kVector == 2) {
      load_global_nc_v2(g_src + i, r_dst + i);
    } else {
      load_global_nc_v1(g_src + i, r_dst + i);
    }
  }
}

// g_dst[0, kWords) <- (kWords), 16 bytes at a time; g_dst 16-byte aligned.
template <int kWords>
HUMMINGD_HD void store_chunk(u32* g_dst, const u32 (&r_src)[kWords]) {
  static_assert(kWords % 4 == 0, "16-byte stores need whole quads");
  HUMMINGD_UNROLL
  for (int i = 0; i < kWords; i += 4) store_global_v4(g_dst + i, r_src + i);
}

}  // namespace hummingd::device
