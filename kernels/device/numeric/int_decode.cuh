#pragma once

// Integer code -> fp32 without an I2F instruction: OR the code into the
// mantissa of 2^23 (where one ulp is exactly 1) and subtract a constant. Every
// operation is exact for codes below 2^23.

#include "arch/float_ops.cuh"
#include "arch/platform.cuh"

namespace hummingd::device {

inline constexpr u32 kMagicBits = 0x4B000000u;  // 2^23 as fp32
inline constexpr float kMagicValue = 8388608.0f;

// 2^23 + code, exactly.
HUMMINGD_HD float magic_float(u32 code) {
  return bits_as_float(kMagicBits | code);
}

// Unsigned code as a float.
HUMMINGD_HD float decode_uint(u32 code) {
  return sub_rn(magic_float(code), kMagicValue);
}

// Unsigned code minus the implicit mid-point 2^(kBits-1).
template <int kBits>
HUMMINGD_HD float decode_uint_midpoint(u32 code) {
  constexpr float kOffset = kMagicValue + static_cast<float>(1u << (kBits - 1));
  return sub_rn(magic_float(code), kOffset);
}

// Unsigned code minus an integer zero point prepared by magic_float(zero).
HUMMINGD_HD float decode_uint_minus_magic_zero(u32 code, float magic_zero) {
  return sub_rn(magic_float(code), magic_zero);
}

// Two's-complement code of kBits bits. Flipping the sign bit maps it to
// offset binary (code + 2^(kBits-1)); the XOR merges into the OR as one LOP3.
template <int kBits>
HUMMINGD_HD float decode_int(u32 code) {
  constexpr u32 kSignBit = 1u << (kBits - 1);
  constexpr float kOffset = kMagicValue + static_cast<float>(kSignBit);
  return sub_rn(bits_as_float((kMagicBits | kSignBit) ^ code), kOffset);
}

}  // namespace hummingd::device
