#pragma once

// fp32 / fp64 arithmetic rounded exactly once per operation on both host and
// device. NVRTC contracts a*b+c into FMA by default (--fmad=true), which
// changes rounding; the `__f*_rn` / `__d*_rn` intrinsics are never
// contracted, so results are bit-identical to the CPU reference whatever the
// compile options.

#include "arch/platform.cuh"

namespace hummingd::device {

HUMMINGD_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

HUMMINGD_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

HUMMINGD_HD float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

HUMMINGD_HD float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

HUMMINGD_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

HUMMINGD_HD double sub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

// fp64 -> fp32, round to nearest even (the widening direction is exact and
// needs no helper).
HUMMINGD_HD float narrow_rn(double value) {
#if defined(__CUDA_ARCH__)
  return __double2float_rn(value);
#else
  return static_cast<float>(value);
#endif
}

// 2^exponent for exponent in [-126, 127], built from bits so that it folds
// to a constant wherever `exponent` is one.
HUMMINGD_HD float exp2_int(int exponent) {
  return bits_as_float(static_cast<u32>(127 + exponent) << 23);
}

}  // namespace hummingd::device
