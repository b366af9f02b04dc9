#pragma once

// Float code -> fp32 by bit moves, no conversion instruction and no rebias:
// sign to bit 31, exponent and mantissa to the low end of the fp32 exponent
// field and the top of its mantissa. Subnormal codes become fp32 subnormals
// with the same power-of-two offset as normal ones, so one exact multiply by
// 2^kExponentOffset (or a scale pre-multiplied by it) finishes the decode.

#include "arch/float_ops.cuh"
#include "arch/platform.cuh"
#include "numeric/formats.cuh"

namespace hummingd::device {

// value(code) * 2^-Format::kExponentOffset, exactly, for the low
// Format::kBits bits of `code` (higher bits must be zero). Infinities and
// NaNs of the format come out as fp32 infinities and NaNs.
template <class Format>
HUMMINGD_HD float decode_float_bits_unscaled(u32 code) {
  constexpr int kPayloadBits = Format::kExponentBits + Format::kMantissaBits;
  constexpr u32 kPayloadMask = (1u << kPayloadBits) - 1u;
  constexpr u32 kExponentMask = ((1u << Format::kExponentBits) - 1u)
                                << Format::kMantissaBits;
  u32 bits = ((code & kPayloadMask) << (23 - Format::kMantissaBits)) |
             ((code << (32 - Format::kBits)) & 0x80000000u);
  // Setting the whole fp32 exponent field keeps the moved mantissa: a zero
  // mantissa becomes infinity, any other a NaN.
  if constexpr (Format::kSpecials == FloatSpecials::kIeee) {
    bits |= (code & kExponentMask) == kExponentMask ? 0x7F800000u : 0u;
  } else if constexpr (Format::kSpecials == FloatSpecials::kFnNan) {
    bits |= (code & kPayloadMask) == kPayloadMask ? 0x7F800000u : 0u;
  }
  return bits_as_float(bits);
}

// The exact factor that turns decode_float_bits_unscaled into the value.
template <class Format>
HUMMINGD_HD float float_decode_factor() {
  return exp2_int(Format::kExponentOffset);
}

// value(code) as fp32, exactly.
template <class Format>
HUMMINGD_HD float decode_float_bits(u32 code) {
  const float unscaled = decode_float_bits_unscaled<Format>(code);
  if constexpr (Format::kExponentOffset == 0) return unscaled;
  return mul_rn(unscaled, float_decode_factor<Format>());
}

}  // namespace hummingd::device
