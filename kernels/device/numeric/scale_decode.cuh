#pragma once

// Scale / zero-point element -> fp32, exactly, for every scale dtype. The raw
// element arrives zero-extended in a u32 (the loader reads kBytes bytes).

#include "arch/platform.cuh"
#include "numeric/float_decode.cuh"
#include "numeric/formats.cuh"

namespace hummingd::device {

// ue8m0 (MX scales): 2^(x-127). x = 0 is 2^-127, an fp32 subnormal, and
// x = 255 is NaN; both differ from `x << 23` only by the mantissa's top bit.
HUMMINGD_HD float decode_ue8m0(u32 raw) {
  const u32 exponent = raw & 0xFFu;
  const bool needs_top_bit = exponent == 0u || exponent == 0xFFu;
  return bits_as_float((exponent << 23) | (needs_top_bit ? 0x00400000u : 0u));
}

template <ScalarType kType>
HUMMINGD_HD float decode_scalar(u32 raw) {
#if defined(__CUDA_ARCH__)
  // The hardware widenings are exact, as is the portable decode below.
  if constexpr (kType == ScalarType::kFp16) {
    float value;
    asm("cvt.f32.f16 %0, %1;"
        : "=f"(value)
        : "h"(static_cast<unsigned short>(raw & 0xFFFFu)));
    return value;
  } else if constexpr (kType == ScalarType::kBf16) {
    return bits_as_float(raw << 16);
  }
#endif
  if constexpr (kType == ScalarType::kFp16) {
    return decode_float_bits<FloatFormat<5, 10>>(raw & 0xFFFFu);
  } else if constexpr (kType == ScalarType::kBf16) {
    return decode_float_bits<FloatFormat<8, 7>>(raw & 0xFFFFu);
  } else if constexpr (kType == ScalarType::kFp32) {
    return bits_as_float(raw);
  } else if constexpr (kType == ScalarType::kE4m3) {
    return decode_float_bits<FloatFormat<4, 3>>(raw & 0xFFu);
  } else if constexpr (kType == ScalarType::kE5m2) {
    return decode_float_bits<FloatFormat<5, 2>>(raw & 0xFFu);
  } else {
    static_assert(kType == ScalarType::kUe8m0, "unhandled scalar type");
    return decode_ue8m0(raw);
  }
}

}  // namespace hummingd::device
