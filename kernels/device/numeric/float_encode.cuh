#pragma once

// fp32 -> fp16 / bf16 with round to nearest even, overflow to infinity and
// subnormal results. The host path is portable bit arithmetic; the device
// path uses cvt.rn where the arch has it. NaN becomes the canonical quiet NaN
// 0x7FFF (what cvt.rn produces), so both paths agree bit for bit.

#include "arch/convert.cuh"
#include "arch/platform.cuh"

namespace hummingd::device {

inline constexpr u32 kCanonicalNan16 = 0x7FFFu;

HUMMINGD_HD u32 encode_fp16_bits(float value) {
  const u32 bits = float_as_bits(value);
  const u32 sign = (bits >> 16) & 0x8000u;
  const u32 magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return kCanonicalNan16;
  // 65520 is the midpoint between 65504 (odd mantissa) and 2^16: ties go to
  // the even neighbour, which is infinity.
  if (magnitude >= 0x477FF000u) return sign | 0x7C00u;
  if (magnitude >= 0x38800000u) {  // normal fp16 result (>= 2^-14)
    const u32 rebiased = magnitude - 0x38000000u;  // exponent 127 -> 15
    const u32 round = 0xFFFu + ((rebiased >> 13) & 1u);
    return sign | ((rebiased + round) >> 13);  // a carry bumps the exponent
  }
  // Subnormal result: the value in units of 2^-24, rounded. Inputs below
  // 2^-25 (exponent <= 101, including fp32 subnormals) round to zero.
  const u32 exponent = magnitude >> 23;
  if (exponent <= 101u) return sign;
  const u32 significand = (magnitude & 0x007FFFFFu) | 0x00800000u;
  const u32 shift = 126u - exponent;  // 14..24
  const u32 quotient = significand >> shift;
  const u32 remainder = significand & ((1u << shift) - 1u);
  const u32 half = 1u << (shift - 1u);
  const bool round_up =
      remainder > half || (remainder == half && (quotient & 1u) != 0u);
  return sign | (quotient + (round_up ? 1u : 0u));
}

HUMMINGD_HD u32 encode_bf16_bits(float value) {
  const u32 bits = float_as_bits(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return kCanonicalNan16;
  const u32 round = 0x7FFFu + ((bits >> 16) & 1u);
  return (bits + round) >> 16;  // overflow carries into infinity
}

// Two values packed as one u32: `lo` in bits [0,16), `hi` in [16,32), which
// is memory order on a little-endian machine.
HUMMINGD_HD u32 encode_fp16x2(float lo, float hi) {
#if defined(HUMMINGD_HAS_CVT_F16X2)
  return cvt_rn_f16x2_f32(lo, hi);
#elif defined(__CUDA_ARCH__)
  return cvt_rn_f16_f32(lo) | (cvt_rn_f16_f32(hi) << 16);
#else
  return encode_fp16_bits(lo) | (encode_fp16_bits(hi) << 16);
#endif
}

HUMMINGD_HD u32 encode_bf16x2(float lo, float hi) {
#if defined(HUMMINGD_HAS_CVT_BF16X2)
  return cvt_rn_bf16x2_f32(lo, hi);
#else
  return encode_bf16_bits(lo) | (encode_bf16_bits(hi) << 16);
#endif
}

}  // namespace hummingd::device
