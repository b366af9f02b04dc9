// Scale / zero-point dtypes through decode_scalar against the reference:
// every bit pattern of the 8- and 16-bit types, fp32 specials plus a large
// random sample.

#include "numeric/scale_decode.cuh"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "gtest/gtest.h"
#include "kernels/quant_spec.h"
#include "kernels/reference/format_reference.h"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd {
namespace {

uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

template <device::ScalarType kType>
void CheckPattern(DataType type, uint32_t raw) {
  const float expected = ReferenceDecodeScale(type, raw);
  const float actual = device::decode_scalar<kType>(raw);
  if (std::isnan(expected)) {
    ASSERT_TRUE(std::isnan(actual))
        << DataTypeName(type) << " raw=0x" << std::hex << raw;
  } else {
    ASSERT_EQ(Bits(actual), Bits(expected))
        << DataTypeName(type) << " raw=0x" << std::hex << raw << " got "
        << actual << " want " << expected;
  }
}

template <device::ScalarType kType>
void CheckAll(DataType type, uint32_t patterns) {
  for (uint32_t raw = 0; raw < patterns; ++raw) CheckPattern<kType>(type, raw);
}

TEST(ScaleDecodeTest, SixteenBitTypesEveryPattern) {
  CheckAll<device::ScalarType::kFp16>(DataType::kFp16, 1u << 16);
  CheckAll<device::ScalarType::kBf16>(DataType::kBf16, 1u << 16);
}

TEST(ScaleDecodeTest, EightBitTypesEveryPattern) {
  CheckAll<device::ScalarType::kE4m3>(DataType::kE4m3, 1u << 8);
  CheckAll<device::ScalarType::kE5m2>(DataType::kE5m2, 1u << 8);
  CheckAll<device::ScalarType::kUe8m0>(DataType::kUe8m0, 1u << 8);
}

TEST(ScaleDecodeTest, Fp32SpecialsAndRandomSample) {
  for (uint32_t raw :
       {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00800000u,
        0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
        0x7F800001u, 0xFFFFFFFFu, 0x3F800000u, 0x34000000u}) {
    CheckPattern<device::ScalarType::kFp32>(DataType::kFp32, raw);
  }
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int i = 0; i < 1 << 20; ++i) {
    CheckPattern<device::ScalarType::kFp32>(DataType::kFp32, rng());
  }
}

TEST(ScaleDecodeTest, Ue8m0EdgesAreExactPowersOfTwo) {
  EXPECT_EQ(device::decode_scalar<device::ScalarType::kUe8m0>(127), 1.0f);
  EXPECT_EQ(device::decode_scalar<device::ScalarType::kUe8m0>(0),
            std::ldexp(1.0f, -127));
  EXPECT_EQ(device::decode_scalar<device::ScalarType::kUe8m0>(254),
            std::ldexp(1.0f, 127));
  EXPECT_TRUE(
      std::isnan(device::decode_scalar<device::ScalarType::kUe8m0>(255)));
}

}  // namespace
}  // namespace hummingd
