#pragma once

// CPU reference decoders and encoders for every number format a spec can
// name. These define the semantics that the device decoders must match bit
// for bit; they are written with plain arithmetic (std::ldexp, division) and
// no bit tricks so that they stay independent of the device code.

#include <cstdint>

#include "kernels/quant_spec.h"

namespace hummingd {

// Value of a raw weight code before any zero point or scale is applied. Only
// the low `type.bits` bits of `code` are read.
//   kUint:  the unsigned integer value of the code.
//   kInt:   the two's-complement value of the code.
//   kFloat: sign bit on top, then exponent_bits, then mantissa_bits; exponent
//           bias 2^(E-1) - 1; exponent field 0 is subnormal
//           (mantissa * 2^(1 - bias - M)). Special values:
//             E == 4 && M == 3 (OCP "fn"): only S.1111.111 is NaN, no inf.
//             E >= 5: IEEE-like; the all-ones exponent field is inf when the
//                     mantissa is 0, NaN otherwise.
//             every other format (e2m1, e3m2, e2m3, e3m4, …): all codes are
//             finite.
// Negative zero decodes to -0.0f. Requires a valid weight type.
float ReferenceDecodeWeightCode(const WeightType& type, uint32_t code);

// True when the code decodes to NaN or +-inf.
bool ReferenceWeightCodeIsSpecial(const WeightType& type, uint32_t code);

// Value of one element of `type` given its raw bits (low bits of `raw_bits`):
//   kFp16  IEEE binary16;  kBf16 the top half of binary32;  kFp32 binary32;
//   kE4m3  OCP fp8 "fn" (no inf, S.1111.111 = NaN);  kE5m2 IEEE-like fp8;
//   kUe8m0 2^(x - 127), x = 0xFF is NaN;
//   kInt8 / kInt4 two's-complement integers (activation codes).
// Used for scales, activations, outputs and float zero points alike.
float ReferenceDecodeScale(DataType type, uint32_t raw_bits);

// Raw bits of `value` in `type`, rounding to nearest with ties to even:
//   kFp16, kBf16, kE5m2: overflow rounds to +-inf, NaN gives the quiet NaN
//     (0x7E00, 0x7FC0, 0x7E).
//   kE4m3: overflow saturates to +-448 (the format has no inf), NaN gives 0x7F.
//   kFp32: the binary32 bits of `value` unchanged.
//   kUe8m0: the power of two nearest to |value| (ties upward), clamped to
//     [2^-127, 2^127]; zero, negative values and NaN give 0xFF (NaN).
//   kInt8 / kInt4: nearest integer (ties to even) saturated to the type's
//     range, as a two's-complement code in the low 8 / 4 bits.
uint32_t ReferenceEncodeFloat(float value, DataType type);

}  // namespace hummingd
