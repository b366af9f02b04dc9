// fp32 -> fp16 / bf16 (round to nearest even) against the reference encoder:
// every representable 16-bit value, both neighbours of it, every midpoint
// between neighbours and the fp32 values just around it, plus a random fp32
// sample. NaN must map to a NaN (the payload convention differs on purpose:
// the device uses the canonical NaN that cvt.rn produces).

#include "numeric/float_encode.cuh"

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

float FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

bool IsNan16(uint32_t bits, DataType type) {
  const uint32_t exponent_mask = type == DataType::kFp16 ? 0x7C00u : 0x7F80u;
  const uint32_t mantissa_mask = type == DataType::kFp16 ? 0x03FFu : 0x007Fu;
  return (bits & exponent_mask) == exponent_mask && (bits & mantissa_mask) != 0;
}

uint32_t Encode(float value, DataType type) {
  return type == DataType::kFp16 ? device::encode_fp16_bits(value)
                                 : device::encode_bf16_bits(value);
}

void Check(float value, DataType type) {
  const uint32_t expected = ReferenceEncodeFloat(value, type);
  const uint32_t actual = Encode(value, type);
  if (IsNan16(expected, type)) {
    ASSERT_TRUE(IsNan16(actual, type)) << DataTypeName(type) << " " << value;
    return;
  }
  ASSERT_EQ(actual, expected) << DataTypeName(type) << " value=" << value
                              << " (0x" << std::hex <<
      [&] {
        uint32_t b;
        std::memcpy(&b, &value, 4);
        return b;
      }() << ")";
}

// All 16-bit patterns decode to fp32 exactly; probe each and the rounding
// boundaries between it and its successor.
void CheckBoundaries(DataType type) {
  for (uint32_t pattern = 0; pattern < (1u << 16); ++pattern) {
    const float value = ReferenceDecodeScale(type, pattern);
    Check(value, type);
    if (!std::isfinite(value)) continue;
    Check(std::nextafter(value, INFINITY), type);
    Check(std::nextafter(value, -INFINITY), type);
    const float successor = ReferenceDecodeScale(type, pattern + 1);
    if ((pattern & 0x7FFFu) == 0x7FFFu || !std::isfinite(successor)) continue;
    const float midpoint = static_cast<float>(
        (static_cast<double>(value) + static_cast<double>(successor)) / 2);
    Check(midpoint, type);
    Check(std::nextafter(midpoint, INFINITY), type);
    Check(std::nextafter(midpoint, -INFINITY), type);
  }
  // Overflow boundaries (the midpoint above the largest finite value).
  const float largest =
      type == DataType::kFp16 ? 65504.0f : FromBits(0x7F7F0000u);
  const float overflow_tie =
      type == DataType::kFp16 ? 65520.0f : FromBits(0x7F7F8000u);
  Check(largest, type);
  Check(overflow_tie, type);
  Check(std::nextafter(overflow_tie, 0.0f), type);
  Check(-overflow_tie, type);
}

TEST(FloatEncodeTest, Fp16EveryValueAndRoundingBoundary) {
  CheckBoundaries(DataType::kFp16);
}

TEST(FloatEncodeTest, Bf16EveryValueAndRoundingBoundary) {
  CheckBoundaries(DataType::kBf16);
}

TEST(FloatEncodeTest, RandomFp32Sample) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (int i = 0; i < 1 << 19; ++i) {
    const float value = FromBits(rng());
    Check(value, DataType::kFp16);
    Check(value, DataType::kBf16);
  }
}

TEST(FloatEncodeTest, SpecialsAndPairPacking) {
  EXPECT_EQ(device::encode_fp16_bits(INFINITY), 0x7C00u);
  EXPECT_EQ(device::encode_fp16_bits(-INFINITY), 0xFC00u);
  EXPECT_EQ(device::encode_fp16_bits(-0.0f), 0x8000u);
  EXPECT_EQ(device::encode_fp16_bits(NAN), device::kCanonicalNan16);
  EXPECT_EQ(device::encode_bf16_bits(NAN), device::kCanonicalNan16);
  EXPECT_EQ(device::encode_bf16_bits(FromBits(0x7F7FFFFFu)), 0x7F80u);
  // Low half first: memory order on a little-endian machine.
  EXPECT_EQ(device::encode_fp16x2(1.0f, -2.0f), 0xC0003C00u);
  EXPECT_EQ(device::encode_bf16x2(1.0f, -2.0f), 0xC0003F80u);
}

}  // namespace
}  // namespace hummingd
