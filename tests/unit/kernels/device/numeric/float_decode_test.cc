// Every float weight format a spec allows (sign + E + M <= 8 bits, E >= 1),
// every code, against the independent reference decoder.

#include "numeric/float_decode.cuh"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "kernels/quant_spec.h"
#include "kernels/reference/format_reference.h"
#include "numeric/weight_decode.cuh"

namespace hummingd {
namespace {

uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// Same value and sign (so -0 != +0); any NaN equals any NaN.
::testing::AssertionResult SameFloat(float actual, float expected) {
  if (std::isnan(expected) && std::isnan(actual)) {
    return ::testing::AssertionSuccess();
  }
  if (Bits(actual) == Bits(expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << actual << " (0x" << std::hex << Bits(actual) << "), want "
         << expected << " (0x" << Bits(expected) << ")";
}

template <int kE, int kM>
int CheckFormat() {
  using Format = device::FloatFormat<kE, kM>;
  using Decoder =
      device::WeightDecoder<device::CodeKind::kFloat, 1 + kE + kM, kE, kM,
                            device::ZeroKind::kNone, device::ScalarType::kFp16>;
  const WeightType type{WeightKind::kFloat, 1 + kE + kM, kE, kM};
  const std::string name = WeightTypeName(type);
  const float factor = device::float_decode_factor<Format>();
  EXPECT_EQ(factor, std::ldexp(1.0f, Format::kExponentOffset)) << name;
  int nans = 0;
  for (uint32_t code = 0; code < (1u << Format::kBits); ++code) {
    const float expected = ReferenceDecodeWeightCode(type, code);
    nans += std::isnan(expected) ? 1 : 0;
    EXPECT_TRUE(SameFloat(device::decode_float_bits<Format>(code), expected))
        << name << " code=" << code;
    // The unscaled decode times the exact factor is the same number.
    EXPECT_TRUE(SameFloat(
        device::decode_float_bits_unscaled<Format>(code) * factor, expected))
        << name << " unscaled code=" << code;
    EXPECT_TRUE(SameFloat(static_cast<float>(Decoder::decode_wide(code, 0.0f)),
                          expected))
        << name << " wide code=" << code;
  }
  return nans;
}

template <int kE, int... kMs>
void CheckExponentWidth(std::integer_sequence<int, kMs...>) {
  (CheckFormat<kE, kMs>(), ...);
}

TEST(FloatDecodeTest, EveryFormatEveryCodeMatchesReference) {
  // E = 1..7 with every mantissa width that keeps the code within 8 bits.
  CheckExponentWidth<1>(std::make_integer_sequence<int, 7>());
  CheckExponentWidth<2>(std::make_integer_sequence<int, 6>());
  CheckExponentWidth<3>(std::make_integer_sequence<int, 5>());
  CheckExponentWidth<4>(std::make_integer_sequence<int, 4>());
  CheckExponentWidth<5>(std::make_integer_sequence<int, 3>());
  CheckExponentWidth<6>(std::make_integer_sequence<int, 2>());
  CheckExponentWidth<7>(std::make_integer_sequence<int, 1>());
}

using E4m3 = device::FloatFormat<4, 3>;
using E5m2 = device::FloatFormat<5, 2>;
using E2m1 = device::FloatFormat<2, 1>;
using E3m2 = device::FloatFormat<3, 2>;

TEST(FloatDecodeTest, SpecialValuesFollowEachConvention) {
  // e4m3 "fn": two NaN codes, no infinity.
  EXPECT_EQ((CheckFormat<4, 3>()), 2);
  EXPECT_TRUE(std::isnan(device::decode_float_bits<E4m3>(0x7F)));
  EXPECT_EQ(device::decode_float_bits<E4m3>(0x7E), 448.0f);
  // e5m2: IEEE infinities and NaNs.
  EXPECT_EQ(device::decode_float_bits<E5m2>(0x7C), INFINITY);
  EXPECT_EQ(device::decode_float_bits<E5m2>(0xFC), -INFINITY);
  EXPECT_TRUE(std::isnan(device::decode_float_bits<E5m2>(0x7D)));
  // e2m1 (FP4): all finite, largest 6, smallest subnormal 0.5.
  EXPECT_EQ((CheckFormat<2, 1>()), 0);
  EXPECT_EQ(device::decode_float_bits<E2m1>(0x7), 6.0f);
  EXPECT_EQ(device::decode_float_bits<E2m1>(0x1), 0.5f);
  EXPECT_EQ(device::decode_float_bits<E2m1>(0xF), -6.0f);
  // Negative zero keeps its sign.
  EXPECT_TRUE(std::signbit(device::decode_float_bits<E3m2>(0x20)));
}

}  // namespace
}  // namespace hummingd
