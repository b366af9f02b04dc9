#pragma once

// Hardware fp32 -> 16-bit conversions (round to nearest even). Device only:
// the host path of numeric/float_encode.cuh is the bit-exact portable
// equivalent. HUMMINGD_HAS_CVT_BF16X2 tells callers whether the bf16
// instruction exists on the arch being compiled (sm_80+).

#include "arch/platform.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define HUMMINGD_HAS_CVT_BF16X2 1
#define HUMMINGD_HAS_CVT_F16X2 1
#endif

namespace hummingd::device {

#if defined(__CUDA_ARCH__)

// One fp16 in the low half of the result.
HUMMINGD_DEVICE u32 cvt_rn_f16_f32(float value) {
  unsigned short half;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(half) : "f"(value));
  return half;
}

#if defined(HUMMINGD_HAS_CVT_F16X2)
// `lo` lands in bits [0,16), `hi` in [16,32): PTX puts its first source in
// the upper half.
HUMMINGD_DEVICE u32 cvt_rn_f16x2_f32(float lo, float hi) {
  u32 packed;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
}
#endif

#if defined(HUMMINGD_HAS_CVT_BF16X2)
HUMMINGD_DEVICE u32 cvt_rn_bf16x2_f32(float lo, float hi) {
  u32 packed;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
}
#endif

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
