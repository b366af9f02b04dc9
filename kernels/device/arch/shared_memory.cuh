#pragma once

// 16-byte shared-memory accesses, the warp barrier and named block
// barriers. Device only.

#include "arch/platform.cuh"

namespace hummingd::device {

#if defined(__CUDA_ARCH__)

// The shared-memory window address of a generic pointer into shared memory.
HUMMINGD_DEVICE u32 shared_address_of(const void* s_ptr) {
  return static_cast<u32>(__cvta_generic_to_shared(s_ptr));
}

HUMMINGD_DEVICE void store_shared_v4(u32* s_dst, const u32* r_src) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(
                   shared_address_of(s_dst)),
               "r"(r_src[0]), "r"(r_src[1]), "r"(r_src[2]), "r"(r_src[3])
               : "memory");
}

HUMMINGD_DEVICE void load_shared_v4(const u32* s_src, u32* r_dst) {
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r_dst[0]), "=r"(r_dst[1]), "=r"(r_dst[2]), "=r"(r_dst[3])
               : "r"(shared_address_of(s_src))
               : "memory");
}

// Four floats at a 16-byte-aligned shared address.
HUMMINGD_DEVICE void store_shared_f32x4(u32 s_address, float a, float b,
                                        float c, float d) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(s_address),
               "f"(a), "f"(b), "f"(c), "f"(d)
               : "memory");
}

HUMMINGD_DEVICE void load_shared_f32x4(u32 s_address, float (&r_dst)[4]) {
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(r_dst[0]), "=f"(r_dst[1]), "=f"(r_dst[2]), "=f"(r_dst[3])
               : "r"(s_address)
               : "memory");
}

// A kBytes (1, 2 or 4) element at a shared address aligned to it,
// zero-extended.
template <int kBytes>
HUMMINGD_DEVICE u32 load_shared_element(u32 s_address) {
  u32 value;
  if constexpr (kBytes == 1) {
    asm volatile("ld.shared.u8 %0, [%1];" : "=r"(value) : "r"(s_address));
  } else if constexpr (kBytes == 2) {
    asm volatile("ld.shared.u16 %0, [%1];" : "=r"(value) : "r"(s_address));
  } else {
    static_assert(kBytes == 4, "1, 2 or 4 bytes");
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(value) : "r"(s_address));
  }
  return value;
}

HUMMINGD_DEVICE void warp_sync() { __syncwarp(); }

// Barrier `id` (1-15; 0 is __syncthreads') among `threads` threads, whole
// warps of the block: like __syncthreads for them alone, it orders their
// shared-memory accesses around it.
HUMMINGD_DEVICE void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
