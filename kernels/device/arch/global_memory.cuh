#pragma once

// Vector global loads and stores. On the device these are single
// ld.global.nc / st.global instructions of 4, 8 or 16 bytes; on the host they
// are plain element copies so that skeletons can run in host tests.
// Callers guarantee alignment to the access width.

#include "arch/platform.cuh"

namespace hummingd::device {

// Read-only (non-coherent) loads: the data must not be written by the kernel.
HUMMINGD_HD void load_global_nc_v1(const u32* g_src, u32* r_dst) {
#if defined(__CUDA_ARCH__)
  asm("ld.global.nc.u32 %0, [%1];" : "=r"(r_dst[0]) : "l"(g_src));
#else
  r_dst[0] = g_src[0];
#endif
}

HUMMINGD_HD void load_global_nc_v2(const u32* g_src, u32* r_dst) {
#if defined(__CUDA_ARCH__)
  asm("ld.global.nc.v2.u32 {%0, %1}, [%2];"
      : "=r"(r_dst[0]), "=r"(r_dst[1])
      : "l"(g_src));
#else
  r_dst[0] = g_src[0];
  r_dst[1] = g_src[1];
#endif
}

HUMMINGD_HD void load_global_nc_v4(const u32* g_src, u32* r_dst) {
#if defined(__CUDA_ARCH__)
  asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(r_dst[0]), "=r"(r_dst[1]), "=r"(r_dst[2]), "=r"(r_dst[3])
      : "l"(g_src));
#else
  for (int i = 0; i < 4; ++i) r_dst[i] = g_src[i];
#endif
}

HUMMINGD_HD void store_global_v4(u32* g_dst, const u32* r_src) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(g_dst),
               "r"(r_src[0]), "r"(r_src[1]), "r"(r_src[2]), "r"(r_src[3])
               : "memory");
#else
  for (int i = 0; i < 4; ++i) g_dst[i] = r_src[i];
#endif
}

}  // namespace hummingd::device
