#pragma once

// 16-byte shared-memory accesses and the warp barrier. Device only.

#include "arch/platform.cuh"

namespace hummingd::device {

#if defined(__CUDA_ARCH__)

HUMMINGD_DEVICE u32 shared_address(const void* s_ptr) {
  return static_cast<u32>(__cvta_generic_to_shared(s_ptr));
}

HUMMINGD_DEVICE void store_shared_v4(u32* s_dst, const u32* r_src) {
  asm volatile(
      "st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(shared_address(s_dst)),
      "r"(r_src[0]), "r"(r_src[1]), "r"(r_src[2]), "r"(r_src[3])
      : "memory");
}

HUMMINGD_DEVICE void load_shared_v4(const u32* s_src, u32* r_dst) {
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r_dst[0]), "=r"(r_dst[1]), "=r"(r_dst[2]), "=r"(r_dst[3])
               : "r"(shared_address(s_src))
               : "memory");
}

HUMMINGD_DEVICE void warp_sync() { __syncwarp(); }

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
