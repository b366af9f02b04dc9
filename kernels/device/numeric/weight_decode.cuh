#pragma once

// One decoder per weight code kind. Each decoder has
//   prepare_zero(raw)        -> per-scale-entry zero term (once per entry),
//   decode(code, zero)       -> fp32 value * 2^-kExponentOffset, exactly,
//   decode_wide(code, zero)  -> the value in fp64, as the reference forms it
//                               (q - z for a float zero point is rounded in
//                               fp64, not fp32),
//   kExponentOffset          -> the exact power of two decode() leaves out,
//                               multiplied back per element or folded into a
//                               scale by the caller.
// Integer kinds have offset 0: their decode is already the value.

#include "arch/float_ops.cuh"
#include "arch/platform.cuh"
#include "numeric/float_decode.cuh"
#include "numeric/formats.cuh"
#include "numeric/int_decode.cuh"
#include "numeric/scale_decode.cuh"

namespace hummingd::device {

template <CodeKind kKind, int kBits, int kExponentBits, int kMantissaBits,
          ZeroKind kZero, ScalarType kZeroType>
struct WeightDecoder;

// uint: q - 2^(bits-1) (no zero point), q - z (uint8 z) or q - z (fp16/bf16
// z). Integer zero points stay exact in fp32 via the magic form of z.
template <int kBits, int kExponentBits, int kMantissaBits, ZeroKind kZero,
          ScalarType kZeroType>
struct WeightDecoder<CodeKind::kUint, kBits, kExponentBits, kMantissaBits,
                     kZero, kZeroType> {
  static constexpr int kExponentOffset = 0;

  HUMMINGD_HD static float prepare_zero(u32 raw) {
    if constexpr (kZero == ZeroKind::kInteger) {
      return magic_float(raw & 0xFFu);
    } else if constexpr (kZero == ZeroKind::kFloat) {
      return decode_scalar<kZeroType>(raw);
    } else {
      return 0.0f;
    }
  }

  HUMMINGD_HD static float decode(u32 code, float zero) {
    if constexpr (kZero == ZeroKind::kInteger) {
      return decode_uint_minus_magic_zero(code, zero);
    } else if constexpr (kZero == ZeroKind::kFloat) {
      return sub_rn(decode_uint(code), zero);  // may round; see decode_wide
    } else {
      return decode_uint_midpoint<kBits>(code);
    }
  }

  HUMMINGD_HD static double decode_wide(u32 code, float zero) {
    if constexpr (kZero == ZeroKind::kFloat) {
      return sub_rn(static_cast<double>(decode_uint(code)),
                    static_cast<double>(zero));
    } else {
      return decode(code, zero);
    }
  }
};

template <int kBits, int kExponentBits, int kMantissaBits, ZeroKind kZero,
          ScalarType kZeroType>
struct WeightDecoder<CodeKind::kInt, kBits, kExponentBits, kMantissaBits, kZero,
                     kZeroType> {
  static_assert(kZero == ZeroKind::kNone, "int codes take no zero point");
  static constexpr int kExponentOffset = 0;
  HUMMINGD_HD static float prepare_zero(u32) { return 0.0f; }
  HUMMINGD_HD static float decode(u32 code, float) {
    return decode_int<kBits>(code);
  }
  HUMMINGD_HD static double decode_wide(u32 code, float zero) {
    return decode(code, zero);
  }
};

template <int kBits, int kExponentBits, int kMantissaBits, ZeroKind kZero,
          ScalarType kZeroType>
struct WeightDecoder<CodeKind::kFloat, kBits, kExponentBits, kMantissaBits,
                     kZero, kZeroType> {
  using Format = FloatFormat<kExponentBits, kMantissaBits>;
  static_assert(Format::kBits == kBits, "bits != 1 + exponent + mantissa");
  static_assert(kZero == ZeroKind::kNone, "float codes take no zero point");
  static constexpr int kExponentOffset = Format::kExponentOffset;
  HUMMINGD_HD static float prepare_zero(u32) { return 0.0f; }
  HUMMINGD_HD static float decode(u32 code, float) {
    return decode_float_bits_unscaled<Format>(code);
  }
  HUMMINGD_HD static double decode_wide(u32 code, float) {
    return decode_float_bits<Format>(code);
  }
};

}  // namespace hummingd::device
