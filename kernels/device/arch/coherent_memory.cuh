#pragma once

// L2-coherent global accesses for data other blocks of the same launch wrote
// (split-K partial sums): .cg bypasses the SM's L1, which is not coherent;
// and the counter that orders them.
// Device only.

#include "arch/platform.cuh"

namespace hummingd::device {

#if defined(__CUDA_ARCH__)

HUMMINGD_DEVICE void load_global_cg_v4(const float* g_src, float* r_dst) {
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(r_dst[0]), "=f"(r_dst[1]), "=f"(r_dst[2]), "=f"(r_dst[3])
               : "l"(g_src)
               : "memory");
}

HUMMINGD_DEVICE void store_global_cg_v4(float* g_dst, const float* r_src) {
  asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(g_dst),
               "f"(r_src[0]), "f"(r_src[1]), "f"(r_src[2]), "f"(r_src[3])
               : "memory");
}

HUMMINGD_DEVICE void store_global_u32(void* g_dst, u32 value) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(g_dst), "r"(value) : "memory");
}

// Adds to a GPU-scope counter between the blocks of a launch (split-K
// arrivals) and returns its value before the add: a release of what this
// thread wrote, or ordered before the add with a barrier, and an acquire
// of what the earlier adds released.
HUMMINGD_DEVICE u32 atomic_fetch_add_acq_rel_gpu(u32* g_word, u32 value) {
  u32 before;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(before)
               : "l"(g_word), "r"(value)
               : "memory");
  return before;
}

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
