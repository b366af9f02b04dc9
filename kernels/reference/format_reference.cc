#include "kernels/reference/format_reference.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace hummingd {
namespace {

// Which codes of a sign/exponent/mantissa format are not ordinary numbers.
enum class Specials {
  kNone,  // every code is finite (e2m1, e3m2, …)
  kFn,    // OCP "fn": only S.1..1.1..1 is NaN, no inf (e4m3)
  kIeee,  // all-ones exponent: inf (mantissa 0) or NaN (fp16, bf16, e5m2, …)
};

struct MiniFloat {
  int exponent_bits;
  int mantissa_bits;
  Specials specials;
};

constexpr MiniFloat kFp16Format = {5, 10, Specials::kIeee};
constexpr MiniFloat kBf16Format = {8, 7, Specials::kIeee};
constexpr MiniFloat kFp32Format = {8, 23, Specials::kIeee};
constexpr MiniFloat kE4m3Format = {4, 3, Specials::kFn};
constexpr MiniFloat kE5m2Format = {5, 2, Specials::kIeee};

// The special-value convention a weight format with E exponent and M
// mantissa bits follows (format_reference.h).
Specials WeightSpecials(int exponent_bits, int mantissa_bits) {
  if (exponent_bits == 4 && mantissa_bits == 3) return Specials::kFn;
  if (exponent_bits >= 5) return Specials::kIeee;
  return Specials::kNone;
}

int64_t Pow2(int exponent) { return int64_t{1} << exponent; }

int Bias(const MiniFloat& format) {
  return static_cast<int>(Pow2(format.exponent_bits - 1)) - 1;
}

float QuietNan() { return std::numeric_limits<float>::quiet_NaN(); }

// Decoding in double is exact for every format here (at most 24 significant
// bits, exponents within double range); the final float conversion is exact
// too because every finite value of these formats is a binary32 value.
double DecodeMiniFloat(const MiniFloat& format, uint64_t code) {
  const int e_bits = format.exponent_bits;
  const int m_bits = format.mantissa_bits;
  const int64_t mantissa_count = Pow2(m_bits);
  const int64_t exponent_count = Pow2(e_bits);
  const int64_t mantissa = static_cast<int64_t>(code % mantissa_count);
  const int64_t exponent_field =
      static_cast<int64_t>((code / mantissa_count) % exponent_count);
  const bool negative = (code / mantissa_count / exponent_count) % 2 == 1;
  const int64_t max_field = exponent_count - 1;

  if (format.specials == Specials::kIeee && exponent_field == max_field) {
    if (mantissa != 0) return QuietNan();
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  if (format.specials == Specials::kFn && exponent_field == max_field &&
      mantissa == mantissa_count - 1) {
    return QuietNan();
  }
  const int bias = Bias(format);
  double magnitude;
  if (exponent_field == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - m_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa_count + mantissa),
                           static_cast<int>(exponent_field) - bias - m_bits);
  }
  return negative ? -magnitude : magnitude;
}

// Rounds a non-negative value to the nearest integer, ties to even; written
// out so that it does not depend on the floating-point rounding mode.
double RoundHalfEven(double q) {
  const double floor_q = std::floor(q);
  const double fraction = q - floor_q;
  if (fraction > 0.5) return floor_q + 1;
  if (fraction < 0.5) return floor_q;
  return std::fmod(floor_q, 2.0) == 0.0 ? floor_q : floor_q + 1;
}

uint32_t Compose(const MiniFloat& format, bool negative, int64_t exponent_field,
                 int64_t mantissa) {
  const int64_t sign_weight = Pow2(format.exponent_bits + format.mantissa_bits);
  return static_cast<uint32_t>((negative ? sign_weight : 0) +
                               exponent_field * Pow2(format.mantissa_bits) +
                               mantissa);
}

uint32_t LargestFinite(const MiniFloat& format, bool negative) {
  const int64_t max_field = Pow2(format.exponent_bits) - 1;
  const int64_t max_mantissa = Pow2(format.mantissa_bits) - 1;
  switch (format.specials) {
    case Specials::kIeee:
      return Compose(format, negative, max_field - 1, max_mantissa);
    case Specials::kFn:
      return Compose(format, negative, max_field, max_mantissa - 1);
    case Specials::kNone:
      break;
  }
  return Compose(format, negative, max_field, max_mantissa);
}

uint32_t EncodeMiniFloat(const MiniFloat& format, double value) {
  const int64_t max_field = Pow2(format.exponent_bits) - 1;
  const int m_bits = format.mantissa_bits;
  if (std::isnan(value)) {
    if (format.specials == Specials::kIeee) {
      return Compose(format, false, max_field, Pow2(m_bits - 1));
    }
    return Compose(format, false, max_field, Pow2(m_bits) - 1);
  }
  const bool negative = std::signbit(value);
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) {
    if (format.specials == Specials::kIeee) {
      return Compose(format, negative, max_field, 0);
    }
    return LargestFinite(format, negative);
  }
  if (magnitude == 0.0) return Compose(format, negative, 0, 0);

  const int bias = Bias(format);
  int frexp_exponent = 0;
  std::frexp(magnitude, &frexp_exponent);  // magnitude in [2^(e-1), 2^e)
  // Below the smallest normal exponent the spacing stays that of the
  // subnormals.
  int exponent = std::max(frexp_exponent - 1, 1 - bias);
  double significand =
      RoundHalfEven(std::ldexp(magnitude, -(exponent - m_bits)));
  if (significand == static_cast<double>(Pow2(m_bits + 1))) {
    ++exponent;
    significand = static_cast<double>(Pow2(m_bits));
  }
  const int64_t significand_int = static_cast<int64_t>(significand);
  int64_t exponent_field;
  int64_t mantissa;
  if (significand_int < Pow2(m_bits)) {
    exponent_field = 0;  // subnormal (or rounded to zero)
    mantissa = significand_int;
  } else {
    exponent_field = exponent + bias;
    mantissa = significand_int - Pow2(m_bits);
  }
  const bool overflow =
      exponent_field > max_field ||
      (format.specials == Specials::kIeee && exponent_field == max_field) ||
      (format.specials == Specials::kFn && exponent_field == max_field &&
       mantissa == Pow2(m_bits) - 1);
  if (overflow) {
    if (format.specials == Specials::kIeee) {
      return Compose(format, negative, max_field, 0);
    }
    return LargestFinite(format, negative);
  }
  return Compose(format, negative, exponent_field, mantissa);
}

double DecodeTwosComplement(uint64_t code, int bits) {
  const int64_t value = static_cast<int64_t>(code % Pow2(bits));
  return static_cast<double>(value >= Pow2(bits - 1) ? value - Pow2(bits)
                                                     : value);
}

uint32_t EncodeTwosComplement(double value, int bits) {
  if (std::isnan(value)) return 0;
  const double low = -static_cast<double>(Pow2(bits - 1));
  const double high = static_cast<double>(Pow2(bits - 1) - 1);
  const bool negative = value < 0;
  double rounded = RoundHalfEven(std::fabs(value));
  if (negative) rounded = -rounded;
  rounded = std::min(std::max(rounded, low), high);
  const int64_t integer = static_cast<int64_t>(rounded);
  return static_cast<uint32_t>(integer < 0 ? integer + Pow2(bits) : integer);
}

uint32_t EncodeUe8m0(double value) {
  if (std::isnan(value) || value <= 0) return 0xFF;
  if (std::isinf(value)) return 127 + 127;
  int frexp_exponent = 0;
  const double fraction = std::frexp(value, &frexp_exponent);  // [0.5, 1)
  // value lies in [2^(e-1), 2^e); the linear midpoint is 0.75 * 2^e.
  int exponent = fraction >= 0.75 ? frexp_exponent : frexp_exponent - 1;
  exponent = std::min(std::max(exponent, -127), 127);
  return static_cast<uint32_t>(exponent + 127);
}

}  // namespace

float ReferenceDecodeWeightCode(const WeightType& type, uint32_t code) {
  const uint64_t masked = code % static_cast<uint64_t>(Pow2(type.bits));
  switch (type.kind) {
    case WeightKind::kUint:
      return static_cast<float>(masked);
    case WeightKind::kInt:
      return static_cast<float>(DecodeTwosComplement(masked, type.bits));
    case WeightKind::kFloat: {
      const MiniFloat format = {
          type.exponent_bits, type.mantissa_bits,
          WeightSpecials(type.exponent_bits, type.mantissa_bits)};
      return static_cast<float>(DecodeMiniFloat(format, masked));
    }
  }
  return QuietNan();
}

bool ReferenceWeightCodeIsSpecial(const WeightType& type, uint32_t code) {
  return !std::isfinite(ReferenceDecodeWeightCode(type, code));
}

float ReferenceDecodeScale(DataType type, uint32_t raw_bits) {
  switch (type) {
    case DataType::kFp16:
      return static_cast<float>(
          DecodeMiniFloat(kFp16Format, raw_bits % 0x10000u));
    case DataType::kBf16:
      return static_cast<float>(
          DecodeMiniFloat(kBf16Format, raw_bits % 0x10000u));
    case DataType::kFp32:
      return static_cast<float>(DecodeMiniFloat(kFp32Format, raw_bits));
    case DataType::kE4m3:
      return static_cast<float>(
          DecodeMiniFloat(kE4m3Format, raw_bits % 0x100u));
    case DataType::kE5m2:
      return static_cast<float>(
          DecodeMiniFloat(kE5m2Format, raw_bits % 0x100u));
    case DataType::kUe8m0: {
      const uint32_t x = raw_bits % 0x100u;
      if (x == 0xFF) return QuietNan();
      return static_cast<float>(std::ldexp(1.0, static_cast<int>(x) - 127));
    }
    case DataType::kInt8:
      return static_cast<float>(DecodeTwosComplement(raw_bits, 8));
    case DataType::kInt4:
      return static_cast<float>(DecodeTwosComplement(raw_bits, 4));
  }
  return QuietNan();
}

uint32_t ReferenceEncodeFloat(float value, DataType type) {
  switch (type) {
    case DataType::kFp16:
      return EncodeMiniFloat(kFp16Format, value);
    case DataType::kBf16:
      return EncodeMiniFloat(kBf16Format, value);
    case DataType::kFp32:
      return std::bit_cast<uint32_t>(value);
    case DataType::kE4m3:
      return EncodeMiniFloat(kE4m3Format, value);
    case DataType::kE5m2:
      return EncodeMiniFloat(kE5m2Format, value);
    case DataType::kUe8m0:
      return EncodeUe8m0(value);
    case DataType::kInt8:
      return EncodeTwosComplement(value, 8);
    case DataType::kInt4:
      return EncodeTwosComplement(value, 4);
  }
  return 0;
}

}  // namespace hummingd
