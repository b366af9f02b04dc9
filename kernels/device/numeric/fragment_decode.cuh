#pragma once

// Weight codes in fragment order (pack/gemm_layout.cuh) -> mma B operand
// registers: extract (shift + mask), decode with the format's decoder
// (magic-number integer decode or float bit moves, no I2F), scale in fp32,
// and pack pairs into the activation type (cvt.rn.{f16,bf16}x2).
// A float format's exponent offset is folded into the scale when the scale
// dtype's range allows, else multiplied per element.

#include "arch/float_ops.cuh"
#include "arch/platform.cuh"
#include "numeric/code_extract.cuh"
#include "numeric/float_encode.cuh"
#include "numeric/formats.cuh"
#include "numeric/scale_decode.cuh"
#include "pack/gemm_layout.cuh"

namespace hummingd::device {

template <class Format>
struct FragmentDecodePlan {
  using Decoder = typename Format::Decoder;
  static constexpr int kExponentOffset = Decoder::kExponentOffset;
  static constexpr bool kFoldOffsetIntoScale =
      kExponentOffset != 0 &&
      ScalarTraits<Format::kScaleType>::kMaxExponent + kExponentOffset <= 127;
  static constexpr bool kOffsetPerElement =
      kExponentOffset != 0 && !kFoldOffsetIntoScale;
};

// Raw scale element -> the fp32 multiplier the decode uses.
template <class Format>
HUMMINGD_HD float prepare_fragment_scale(u32 raw) {
  using Plan = FragmentDecodePlan<Format>;
  float scale = decode_scalar<Format::kScaleType>(raw);
  if constexpr (Plan::kFoldOffsetIntoScale) {
    scale = mul_rn(scale, exp2_int(Plan::kExponentOffset));
  }
  return scale;
}

// One code -> scaled fp32 weight.
template <class Format>
HUMMINGD_HD float decode_scaled(u32 code, float scale, float zero) {
  using Plan = FragmentDecodePlan<Format>;
  float value = Plan::Decoder::decode(code, zero);
  if constexpr (Plan::kOffsetPerElement) {
    value = mul_rn(value, exp2_int(Plan::kExponentOffset));
  }
  return mul_rn(value, scale);
}

template <ScalarType kType>
HUMMINGD_HD u32 pack_operand_pair(float lo, float hi) {
  if constexpr (kType == ScalarType::kBf16) {
    return encode_bf16x2(lo, hi);
  } else {
    return encode_fp16x2(lo, hi);
  }
}

// K-step `step` (0..3) of a lane's 32 codes: r_b[j][r] is operand register
// b_r of n-half j. r_scale / r_zero are the lane's values for rows j = 0, 1.
template <class Format>
HUMMINGD_HD void decode_fragment_step(const u32* r_words, int step,
                                      const float (&r_scale)[2],
                                      const float (&r_zero)[2],
                                      u32 (&r_b)[2][2]) {
  HUMMINGD_UNROLL
  for (int j = 0; j < 2; ++j) {
    HUMMINGD_UNROLL
    for (int r = 0; r < 2; ++r) {
      const int code = 8 * step + 4 * j + 2 * r;
      const float lo = decode_scaled<Format>(
          extract_code<Format::kBits>(r_words,
                                      gemm_code_slot(Format::kBits, code)),
          r_scale[j], r_zero[j]);
      const float hi = decode_scaled<Format>(
          extract_code<Format::kBits>(r_words,
                                      gemm_code_slot(Format::kBits, code + 1)),
          r_scale[j], r_zero[j]);
      r_b[j][r] = pack_operand_pair<Format::kActivationType>(lo, hi);
    }
  }
}

}  // namespace hummingd::device
