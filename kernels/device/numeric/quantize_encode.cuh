#pragma once

// Quantize-from-float arithmetic shared by the GPU quantize kernel
// (pack/quantize.cuh) and the CPU reference (kernels/reference/
// quantize_reference.h), so that both produce the same bytes. Every step is
// one correctly rounded fp32 operation (explicit _rn intrinsics on the device,
// where --fmad=true could otherwise contract), an exact min/max, or integer
// bit arithmetic. The format is a runtime struct: the device kernel builds it
// from compile-time constants and the compiler folds it away.
//
// Rules (round to nearest everywhere, inputs must be finite):
//   per scale entry, lo = min(0, min w) and hi = max(0, max w); absmax =
//   max(-lo, hi). A zero range (all-zero entry) uses scale 1.
//   uint, no zero point:  s = absmax / max(2^(b-1) - 1, 1),
//                         q = clamp(rne(w / s) + 2^(b-1), 0, 2^b - 1)
//   uint, integer zero:   s = (hi - lo) / (2^b - 1),
//                         z = clamp(rne(-lo / s), 0, 2^b - 1),
//                         q = clamp(rne(w / s) + z, 0, 2^b - 1)
//   uint, float zero:     s as above, z = -lo / s rounded to the zero dtype,
//                         q = clamp(rne(w / s + z), 0, 2^b - 1)
//   int:                  s = absmax / (2^(b-1) - 1),
//                         q = clamp(rne(w / s), -2^(b-1), 2^(b-1) - 1)
//   float eEmM:           s = absmax / max_finite(eEmM), q = w / s rounded to
//                         nearest even in eEmM, saturating at max_finite
// `s` above is always the scale *after* encoding in the scale dtype and
// decoding again. fp16 / bf16 / fp32 scales round to nearest; 8-bit scales
// (e4m3, e5m2, ue8m0) round UP (to the next representable value, saturating
// at the largest finite one) so that no code overflows by more than rounding;
// a scale that would encode to zero rounds up to the smallest positive one.

#include "arch/float_ops.cuh"
#include "arch/platform.cuh"
#include "numeric/float_encode.cuh"
#include "numeric/formats.cuh"
#include "numeric/scale_decode.cuh"

namespace hummingd::device {

struct QuantizeFormat {
  CodeKind kind;
  int bits;
  int exponent_bits;  // kFloat only
  int mantissa_bits;  // kFloat only
  ZeroKind zero;
  ScalarType scale_type;
  ScalarType zero_type;  // dtype of float zero points (fp16 / bf16)
};

// One scale entry's encoded scale (and zero point) plus the decoded values
// the codes are computed against.
struct QuantizeEntry {
  u32 scale_bits;
  u32 zero_bits;  // integer zero: the code; float zero: fp16/bf16 bits
  float scale;
  float zero;
};

// Round half to even (the default rounding mode on both sides).
HUMMINGD_HD float quantize_rne(float x) {
#if defined(__CUDA_ARCH__)
  return rintf(x);
#else
  return __builtin_rintf(x);
#endif
}

HUMMINGD_HD float quantize_clamp(float x, float lo, float hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

// Largest finite magnitude code (sign bit clear) of sign + E + M.
HUMMINGD_HD u32 small_float_max_code(int exponent_bits, int mantissa_bits) {
  const u32 all_ones = (1u << (exponent_bits + mantissa_bits)) - 1u;
  if (exponent_bits >= 5) {  // IEEE-like: the top exponent is inf / NaN
    return all_ones - (1u << mantissa_bits);
  }
  if (exponent_bits == 4 && mantissa_bits == 3) return all_ones - 1u;  // fn
  return all_ones;
}

// |value| -> magnitude code of sign + E + M (bias 2^(E-1) - 1, subnormals),
// round to nearest even, saturating at the largest finite code. fp32
// subnormal inputs are below every target's smallest subnormal half and
// round to zero.
HUMMINGD_HD u32 encode_small_float_magnitude(float value, int exponent_bits,
                                             int mantissa_bits) {
  const u32 magnitude = float_as_bits(value) & 0x7FFFFFFFu;
  const u32 max_code = small_float_max_code(exponent_bits, mantissa_bits);
  if (magnitude >= 0x7F800000u) return max_code;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int exponent = static_cast<int>(magnitude >> 23) - 127;
  const int drop = 23 - mantissa_bits;
  if (exponent >= 1 - bias) {  // normal result
    const u32 rebiased = magnitude - (static_cast<u32>(127 - bias) << 23);
    const u32 round = ((1u << drop) >> 1) - 1u + ((rebiased >> drop) & 1u);
    const u32 code = (rebiased + round) >> drop;
    return code > max_code ? max_code : code;
  }
  if ((magnitude >> 23) == 0u) return 0u;
  const int shift = drop + (1 - bias - exponent);
  if (shift > 24) return 0u;
  const u32 significand = (magnitude & 0x007FFFFFu) | 0x00800000u;
  const u32 quotient = significand >> shift;
  const u32 remainder = significand & ((1u << shift) - 1u);
  const u32 half = 1u << (shift - 1);
  const bool round_up =
      remainder > half || (remainder == half && (quotient & 1u) != 0u);
  return quotient + (round_up ? 1u : 0u);
}

HUMMINGD_HD float decode_scalar_runtime(ScalarType type, u32 raw) {
  switch (type) {
    case ScalarType::kFp16:
      return decode_scalar<ScalarType::kFp16>(raw);
    case ScalarType::kBf16:
      return decode_scalar<ScalarType::kBf16>(raw);
    case ScalarType::kFp32:
      return decode_scalar<ScalarType::kFp32>(raw);
    case ScalarType::kE4m3:
      return decode_scalar<ScalarType::kE4m3>(raw);
    case ScalarType::kE5m2:
      return decode_scalar<ScalarType::kE5m2>(raw);
    case ScalarType::kUe8m0:
      return decode_scalar<ScalarType::kUe8m0>(raw);
  }
  return 0.0f;
}

// Positive scale -> raw bits of `type` per the rules above.
HUMMINGD_HD u32 encode_quantize_scale(ScalarType type, float scale) {
  switch (type) {
    case ScalarType::kFp32:
      return float_as_bits(scale);
    case ScalarType::kFp16:
    case ScalarType::kBf16: {
      const u32 bits = type == ScalarType::kFp16 ? encode_fp16_bits(scale)
                                                 : encode_bf16_bits(scale);
      return bits == 0u ? 1u : bits;  // never a zero scale
    }
    case ScalarType::kE4m3:
    case ScalarType::kE5m2: {
      const int e = type == ScalarType::kE4m3 ? 4 : 5;
      const int m = type == ScalarType::kE4m3 ? 3 : 2;
      u32 bits = encode_small_float_magnitude(scale, e, m);
      if ((bits == 0u || decode_scalar_runtime(type, bits) < scale) &&
          bits < small_float_max_code(e, m)) {
        ++bits;
      }
      return bits;
    }
    case ScalarType::kUe8m0: {
      const u32 magnitude = float_as_bits(scale) & 0x7FFFFFFFu;
      u32 exponent = magnitude >> 23;
      if (exponent == 0u) return magnitude > 0x00400000u ? 1u : 0u;
      if ((magnitude & 0x007FFFFFu) != 0u) ++exponent;
      return exponent > 254u ? 254u : exponent;
    }
  }
  return 0u;
}

// The entry's scale and zero point from lo = min(0, min w), hi = max(0, max w).
HUMMINGD_HD QuantizeEntry make_quantize_entry(const QuantizeFormat& format,
                                              float lo, float hi) {
  QuantizeEntry entry{0u, 0u, 1.0f, 0.0f};
  const float absmax = -lo > hi ? -lo : hi;
  const bool asymmetric =
      format.kind == CodeKind::kUint && format.zero != ZeroKind::kNone;
  float range;
  float levels;
  if (asymmetric) {
    range = sub_rn(hi, lo);
    levels = static_cast<float>((1u << format.bits) - 1u);
  } else if (format.kind == CodeKind::kFloat) {
    range = absmax;
    const u32 max_code =
        small_float_max_code(format.exponent_bits, format.mantissa_bits);
    // Largest finite value: the max code moved into fp32 bits exactly.
    const int bias = (1 << (format.exponent_bits - 1)) - 1;
    const u32 field = max_code >> format.mantissa_bits;
    const u32 mantissa = max_code & ((1u << format.mantissa_bits) - 1u);
    levels = bits_as_float(((field + 127u - static_cast<u32>(bias)) << 23) |
                           (mantissa << (23 - format.mantissa_bits)));
  } else {
    range = absmax;
    const u32 half_levels = (1u << (format.bits - 1)) - 1u;
    levels = static_cast<float>(half_levels == 0u ? 1u : half_levels);
  }
  const float raw_scale = range > 0.0f ? div_rn(range, levels) : 1.0f;
  entry.scale_bits = encode_quantize_scale(format.scale_type, raw_scale);
  entry.scale = decode_scalar_runtime(format.scale_type, entry.scale_bits);
  if (asymmetric) {
    const float zero = div_rn(-lo, entry.scale);
    if (format.zero == ZeroKind::kInteger) {
      const float max_code = static_cast<float>((1u << format.bits) - 1u);
      entry.zero = quantize_clamp(quantize_rne(zero), 0.0f, max_code);
      entry.zero_bits = static_cast<u32>(entry.zero);
    } else {
      entry.zero_bits = format.zero_type == ScalarType::kBf16
                            ? encode_bf16_bits(zero)
                            : encode_fp16_bits(zero);
      entry.zero = decode_scalar_runtime(format.zero_type, entry.zero_bits);
    }
  }
  return entry;
}

// Code of one weight (low `bits` bits) against its entry.
HUMMINGD_HD u32 quantize_code(const QuantizeFormat& format,
                              const QuantizeEntry& entry, float w) {
  const float ratio = div_rn(w, entry.scale);
  if (format.kind == CodeKind::kFloat) {
    const u32 sign = float_as_bits(ratio) >> 31;
    const u32 magnitude = encode_small_float_magnitude(
        ratio, format.exponent_bits, format.mantissa_bits);
    return (sign << (format.exponent_bits + format.mantissa_bits)) | magnitude;
  }
  const u32 mask = (1u << format.bits) - 1u;
  if (format.kind == CodeKind::kInt) {
    const float half = static_cast<float>(1u << (format.bits - 1));
    const float q = quantize_clamp(quantize_rne(ratio), -half, half - 1.0f);
    return static_cast<u32>(static_cast<int>(q)) & mask;
  }
  float q;
  if (format.zero == ZeroKind::kFloat) {
    q = quantize_rne(add_rn(ratio, entry.zero));
  } else {
    const float offset = format.zero == ZeroKind::kInteger
                             ? entry.zero
                             : static_cast<float>(1u << (format.bits - 1));
    q = add_rn(quantize_rne(ratio), offset);
  }
  return static_cast<u32>(quantize_clamp(q, 0.0f, static_cast<float>(mask)));
}

}  // namespace hummingd::device
