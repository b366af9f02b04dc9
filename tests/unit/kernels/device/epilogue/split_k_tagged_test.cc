// The split-K word code of the wgmma decode tiles
// (kernels/device/epilogue/split_k_tagged.cuh): 0 must mean "not written",
// so no fp32 value may encode to 0, and every non-NaN value must come back
// bit for bit (the sum over splits is then the one split_k_reduce makes).

#include "epilogue/split_k_tagged.cuh"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace hummingd::device {
namespace {

float FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint32_t ToBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// Checks one bit pattern; returns false on the first failure.
bool RoundTrips(uint32_t bits) {
  const float value = FromBits(bits);
  const uint32_t word = split_word_encode(value);
  if (word == 0u) {
    ADD_FAILURE() << "bits 0x" << std::hex << bits << " encode to 0";
    return false;
  }
  const float back = split_word_decode(word);
  if (std::isnan(value)) {
    if (!std::isnan(back) || ToBits(back) != 0x7FFFFFFFu) {
      ADD_FAILURE() << "NaN 0x" << std::hex << bits
                    << " does not come back canonical";
      return false;
    }
    return true;
  }
  if (ToBits(back) != bits) {
    ADD_FAILURE() << "bits 0x" << std::hex << bits << " come back as 0x"
                  << ToBits(back);
    return false;
  }
  return true;
}

TEST(SplitKTaggedTest, SpecialValuesRoundTripAndNeverEncodeToZero) {
  const uint32_t special[] = {
      0x00000000u,  // +0
      0x80000000u,  // -0
      0x00000001u,  // smallest subnormal
      0x807FFFFFu,  // largest negative subnormal
      0x3F800000u,  // 1
      0xBF800000u,  // -1
      0x7F7FFFFFu,  // largest finite
      0xFF7FFFFFu,  // most negative finite
      0x7F800000u,  // +inf
      0xFF800000u,  // -inf
      0x7FC00000u,  // quiet NaN
      0x7FFFFFFFu,  // canonical NaN
      0xFFFFFFFFu,  // the one pattern whose bits + 1 would be 0
      0xFF800001u,  // signalling NaN, negative
  };
  for (uint32_t bits : special) EXPECT_TRUE(RoundTrips(bits));
  EXPECT_EQ(split_word_encode(FromBits(0x00000000u)), 1u);
}

TEST(SplitKTaggedTest, EveryStridedAndRandomPatternRoundTrips) {
  // A stride coprime to 2^32 walks every exponent and sign; random patterns
  // fill in between.
  uint32_t bits = 0;
  for (int i = 0; i < (1 << 20); ++i, bits += 4099u) {
    ASSERT_TRUE(RoundTrips(bits));
  }
  std::mt19937 rng(20261130u);
  for (int i = 0; i < (1 << 20); ++i) ASSERT_TRUE(RoundTrips(rng()));
}

}  // namespace
}  // namespace hummingd::device
