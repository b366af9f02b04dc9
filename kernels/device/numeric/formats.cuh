#pragma once

// Closed enums that a generated stub instantiates kernels with, and the
// compile-time facts about each format. Values mirror the host enums in
// kernels/quant_spec.h so that codegen maps them one to one.

#include "arch/platform.cuh"

namespace hummingd::device {

// How a weight code is read (host: WeightKind).
enum class CodeKind : int {
  kUint = 1,   // unsigned code
  kInt = 2,    // two's complement
  kFloat = 3,  // sign, exponent, mantissa
};

// Element types of scales, zero points and outputs (host: DataType).
enum class ScalarType : int {
  kFp16 = 1,
  kBf16 = 2,
  kFp32 = 3,
  kE4m3 = 4,
  kE5m2 = 5,
  kUe8m0 = 6,
};

// Where one scale applies (host: ScaleGranularity).
enum class ScaleLayout : int {
  kGroup = 1,
  kChannel = 2,
  kBlock = 3,
  kTensor = 4,
};

// The (rows, columns) of an N x K weight matrix one scale entry covers, and
// the entries per row, in the checkpoint layout
// (kernels/reference/dequant_reference.h). kBlockN / kBlockK: group ->
// (1, group size); block -> (block_n, block_k); channel and tensor ignore
// them.
template <ScaleLayout kLayout, int kBlockN, int kBlockK, i64 kN, i64 kK>
struct ScaleTiling {
  static constexpr i64 kScaleTileN = kLayout == ScaleLayout::kBlock    ? kBlockN
                                     : kLayout == ScaleLayout::kTensor ? kN
                                                                       : 1;
  static constexpr i64 kScaleTileK =
      kLayout == ScaleLayout::kGroup || kLayout == ScaleLayout::kBlock ? kBlockK
                                                                       : kK;
  static constexpr i64 kScaleColumns = kK / kScaleTileK;
};

// Zero point of uint codes (host: ZeroPointKind).
enum class ZeroKind : int {
  kNone = 1,     // implicit mid-point 2^(bits-1)
  kInteger = 2,  // uint8 per scale entry
  kFloat = 3,    // fp16/bf16 per scale entry
};

// Extra fp32 multiplier applied after the scale (host: SecondaryScale).
enum class SecondaryKind : int {
  kNone = 1,
  kTensor = 2,
  kChannel = 3,
};

// Which codes of a float format are not finite.
enum class FloatSpecials : int {
  kAllFinite = 1,  // small formats (e2m1, e3m2, ...): every code is a number
  kFnNan = 2,      // e4m3 "fn": S.1111.111 is NaN, no infinity
  kIeee = 3,       // exponent all ones: infinity (mantissa 0) or NaN
};

// A sign + kExponentBits + kMantissaBits float with IEEE-style bias and
// subnormals. Decoding moves the bits into the low end of an fp32 exponent
// field, which yields value * 2^-kExponentOffset; the offset is an exact
// power of two that callers multiply back (or fold into a scale).
template <int kExponentBits_, int kMantissaBits_>
struct FloatFormat {
  static constexpr int kExponentBits = kExponentBits_;
  static constexpr int kMantissaBits = kMantissaBits_;
  static constexpr int kBits = 1 + kExponentBits + kMantissaBits;
  static constexpr int kBias = (1 << (kExponentBits - 1)) - 1;
  static constexpr int kExponentOffset = 127 - kBias;
  static constexpr FloatSpecials kSpecials =
      kExponentBits >= 5                           ? FloatSpecials::kIeee
      : (kExponentBits == 4 && kMantissaBits == 3) ? FloatSpecials::kFnNan
                                                   : FloatSpecials::kAllFinite;
  static_assert(kExponentBits >= 1 && kExponentBits <= 8,
                "exponent must fit an fp32 exponent field");
  static_assert(kMantissaBits >= 0 && kMantissaBits <= 23,
                "mantissa must fit an fp32 mantissa");
};

template <ScalarType kType>
struct ScalarTraits;

// kBytes: storage size; kMaxExponent: floor(log2(largest finite value)),
// which decides whether an exponent offset can be folded into a scale of
// this type without overflowing fp32.
template <>
struct ScalarTraits<ScalarType::kFp16> {
  static constexpr int kBytes = 2;
  static constexpr int kMaxExponent = 15;
};
template <>
struct ScalarTraits<ScalarType::kBf16> {
  static constexpr int kBytes = 2;
  static constexpr int kMaxExponent = 127;
};
template <>
struct ScalarTraits<ScalarType::kFp32> {
  static constexpr int kBytes = 4;
  static constexpr int kMaxExponent = 127;
};
template <>
struct ScalarTraits<ScalarType::kE4m3> {
  static constexpr int kBytes = 1;
  static constexpr int kMaxExponent = 8;
};
template <>
struct ScalarTraits<ScalarType::kE5m2> {
  static constexpr int kBytes = 1;
  static constexpr int kMaxExponent = 15;
};
template <>
struct ScalarTraits<ScalarType::kUe8m0> {
  static constexpr int kBytes = 1;
  static constexpr int kMaxExponent = 127;
};

}  // namespace hummingd::device
