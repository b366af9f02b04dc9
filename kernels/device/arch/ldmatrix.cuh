#pragma once

// ldmatrix: four 8x8 b16 matrices from shared memory into the mma fragment
// registers of a warp. Lanes 8i..8i+7 give the row addresses (16 bytes each)
// of matrix i; register i of every lane receives its part of matrix i.
// Device only (sm_75+).

#include "arch/platform.cuh"

namespace hummingd::device {

#if defined(__CUDA_ARCH__)

HUMMINGD_DEVICE void ldmatrix_x4(u32 (&r_dst)[4], u32 s_row_address) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
      : "=r"(r_dst[0]), "=r"(r_dst[1]), "=r"(r_dst[2]), "=r"(r_dst[3])
      : "r"(s_row_address));
}

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
