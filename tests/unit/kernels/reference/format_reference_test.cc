#include "kernels/reference/format_reference.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd {
namespace {

WeightType Float(int e, int m) { return {WeightKind::kFloat, 1 + e + m, e, m}; }

float Pow2(int e) { return std::ldexp(1.0f, e); }

// Every float weight format a valid spec can name.
std::vector<WeightType> AllFloatFormats() {
  std::vector<WeightType> formats;
  for (int e = 1; e <= 7; ++e) {
    for (int m = 0; 1 + e + m <= 8; ++m) formats.push_back(Float(e, m));
  }
  return formats;
}

// ---- known values ----------------------------------------------------------

TEST(DecodeWeightCodeTest, E4m3KnownValues) {
  const WeightType t = Float(4, 3);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x00), 0.0f);
  EXPECT_FALSE(std::signbit(ReferenceDecodeWeightCode(t, 0x00)));
  EXPECT_TRUE(std::signbit(ReferenceDecodeWeightCode(t, 0x80)));
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x80), 0.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x01), Pow2(-9));
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x07), 7 * Pow2(-9));
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x08), Pow2(-6));
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x38), 1.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x3C), 1.5f);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x40), 2.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x77), 240.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x78), 256.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x7E), 448.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0xFE), -448.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0xB8), -1.0f);
  EXPECT_TRUE(std::isnan(ReferenceDecodeWeightCode(t, 0x7F)));
  EXPECT_TRUE(std::isnan(ReferenceDecodeWeightCode(t, 0xFF)));
}

TEST(DecodeWeightCodeTest, E5m2KnownValues) {
  const WeightType t = Float(5, 2);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x01), Pow2(-16));
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x03), 3 * Pow2(-16));
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x04), Pow2(-14));
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x3C), 1.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x3D), 1.25f);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x7B), 57344.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0x7C),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(ReferenceDecodeWeightCode(t, 0xFC),
            -std::numeric_limits<float>::infinity());
  for (uint32_t code : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu, 0xFEu, 0xFFu}) {
    EXPECT_TRUE(std::isnan(ReferenceDecodeWeightCode(t, code))) << code;
  }
}

TEST(DecodeWeightCodeTest, E2m1AllSixteenValues) {
  const float expected[16] = {0,  0.5f,  1,  1.5f,  2,  3,  4,  6,
                              -0, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (uint32_t code = 0; code < 16; ++code) {
    const float value = ReferenceDecodeWeightCode(Float(2, 1), code);
    EXPECT_EQ(value, expected[code]) << code;
    EXPECT_EQ(std::signbit(value), code >= 8) << code;
  }
}

TEST(DecodeWeightCodeTest, SixBitFloatKnownValues) {
  const WeightType e3m2 = Float(3, 2);  // bias 3
  EXPECT_EQ(ReferenceDecodeWeightCode(e3m2, 0x01), 0.0625f);
  EXPECT_EQ(ReferenceDecodeWeightCode(e3m2, 0x04), 0.25f);
  EXPECT_EQ(ReferenceDecodeWeightCode(e3m2, 0x0C), 1.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(e3m2, 0x1F), 28.0f);  // no inf/NaN
  EXPECT_EQ(ReferenceDecodeWeightCode(e3m2, 0x3F), -28.0f);
  const WeightType e2m3 = Float(2, 3);  // bias 1
  EXPECT_EQ(ReferenceDecodeWeightCode(e2m3, 0x01), 0.125f);
  EXPECT_EQ(ReferenceDecodeWeightCode(e2m3, 0x08), 1.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(e2m3, 0x1F), 7.5f);
  EXPECT_EQ(ReferenceDecodeWeightCode(e2m3, 0x3F), -7.5f);
  const WeightType e3m4 = Float(3, 4);  // bias 3, every code finite
  EXPECT_EQ(ReferenceDecodeWeightCode(e3m4, 0x7F), 31.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(e3m4, 0x01), Pow2(-6));
}

TEST(DecodeWeightCodeTest, IntegerCodes) {
  for (int bits = 1; bits <= 8; ++bits) {
    const WeightType t{WeightKind::kUint, bits, 0, 0};
    for (uint32_t code = 0; code < (1u << bits); ++code) {
      EXPECT_EQ(ReferenceDecodeWeightCode(t, code), static_cast<float>(code));
    }
  }
  const WeightType int4{WeightKind::kInt, 4, 0, 0};
  EXPECT_EQ(ReferenceDecodeWeightCode(int4, 0x7), 7.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(int4, 0x8), -8.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(int4, 0xF), -1.0f);
  const WeightType int2{WeightKind::kInt, 2, 0, 0};
  EXPECT_EQ(ReferenceDecodeWeightCode(int2, 2), -2.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(int2, 1), 1.0f);
  const WeightType int8{WeightKind::kInt, 8, 0, 0};
  EXPECT_EQ(ReferenceDecodeWeightCode(int8, 0x80), -128.0f);
  EXPECT_EQ(ReferenceDecodeWeightCode(int8, 0x7F), 127.0f);
  // Only the low `bits` bits are read.
  EXPECT_EQ(ReferenceDecodeWeightCode(int4, 0xF7), 7.0f);
}

// ---- structure over all codes of all formats -------------------------------

TEST(DecodeWeightCodeTest, FloatFormatsMonotonicSymmetricWithExpectedSpecials) {
  for (const WeightType& t : AllFloatFormats()) {
    SCOPED_TRACE(WeightTypeName(t));
    const uint32_t half = 1u << (t.bits - 1);
    int nan_count = 0;
    int inf_count = 0;
    float previous = -1;
    for (uint32_t code = 0; code < half; ++code) {
      const float positive = ReferenceDecodeWeightCode(t, code);
      const float negative = ReferenceDecodeWeightCode(t, code | half);
      if (std::isnan(positive)) {
        EXPECT_TRUE(std::isnan(negative)) << code;
        nan_count += 2;
        continue;
      }
      EXPECT_EQ(negative, -positive) << code;
      EXPECT_TRUE(std::signbit(negative)) << code;
      EXPECT_GT(positive, previous) << code;  // strictly increasing
      previous = positive;
      if (std::isinf(positive)) inf_count += 2;
    }
    const int m_codes = 1 << t.mantissa_bits;
    if (t.exponent_bits == 4 && t.mantissa_bits == 3) {
      EXPECT_EQ(nan_count, 2);
      EXPECT_EQ(inf_count, 0);
    } else if (t.exponent_bits >= 5) {
      EXPECT_EQ(nan_count, 2 * (m_codes - 1));
      EXPECT_EQ(inf_count, 2);
    } else {
      EXPECT_EQ(nan_count, 0);
      EXPECT_EQ(inf_count, 0);
    }
    // The smallest subnormal (or, with no mantissa, smallest normal) and the
    // value 1.0 sit where the bias says.
    const int bias = (1 << (t.exponent_bits - 1)) - 1;
    if (t.mantissa_bits > 0) {
      EXPECT_EQ(ReferenceDecodeWeightCode(t, 1),
                Pow2(1 - bias - t.mantissa_bits));
    }
    if (bias >= 1) {  // with E = 1 the field that would hold 1.0 is subnormal
      EXPECT_EQ(ReferenceDecodeWeightCode(t, static_cast<uint32_t>(bias)
                                                 << t.mantissa_bits),
                1.0f);
    }
    EXPECT_EQ(ReferenceDecodeWeightCode(t, 0), 0.0f);
  }
}

TEST(DecodeWeightCodeTest, IntFormatsAreTwosComplementOverAllCodes) {
  for (int bits = 2; bits <= 8; ++bits) {
    const WeightType t{WeightKind::kInt, bits, 0, 0};
    const int half = 1 << (bits - 1);
    for (int value = -half; value < half; ++value) {
      const uint32_t code = static_cast<uint32_t>(value) & ((1u << bits) - 1);
      EXPECT_EQ(ReferenceDecodeWeightCode(t, code), static_cast<float>(value));
    }
  }
}

// ---- scale / element decode ------------------------------------------------

TEST(DecodeScaleTest, Fp16KnownValues) {
  EXPECT_EQ(ReferenceDecodeScale(DataType::kFp16, 0x3C00), 1.0f);
  EXPECT_EQ(ReferenceDecodeScale(DataType::kFp16, 0xC000), -2.0f);
  EXPECT_EQ(ReferenceDecodeScale(DataType::kFp16, 0x3555),
            0.25f + 341 * Pow2(-12));
  EXPECT_EQ(ReferenceDecodeScale(DataType::kFp16, 0x7BFF), 65504.0f);
  EXPECT_EQ(ReferenceDecodeScale(DataType::kFp16, 0x0001), Pow2(-24));
  EXPECT_EQ(ReferenceDecodeScale(DataType::kFp16, 0x0400), Pow2(-14));
  EXPECT_EQ(ReferenceDecodeScale(DataType::kFp16, 0x7C00),
            std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(ReferenceDecodeScale(DataType::kFp16, 0x7E00)));
  EXPECT_TRUE(std::isnan(ReferenceDecodeScale(DataType::kFp16, 0xFC01)));
}

TEST(DecodeScaleTest, Bf16KnownValues) {
  EXPECT_EQ(ReferenceDecodeScale(DataType::kBf16, 0x3F80), 1.0f);
  EXPECT_EQ(ReferenceDecodeScale(DataType::kBf16, 0xBFC0), -1.5f);
  EXPECT_EQ(ReferenceDecodeScale(DataType::kBf16, 0x0001), Pow2(-133));
  EXPECT_EQ(ReferenceDecodeScale(DataType::kBf16, 0x7F7F),
            std::ldexp(255.0f, 120));
  EXPECT_EQ(ReferenceDecodeScale(DataType::kBf16, 0xFF80),
            -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(ReferenceDecodeScale(DataType::kBf16, 0x7FC0)));
}

TEST(DecodeScaleTest, Bf16IsTheTopHalfOfFp32) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float bf16 = ReferenceDecodeScale(DataType::kBf16, bits);
    const float fp32 = std::bit_cast<float>(bits << 16);
    if (std::isnan(fp32)) {
      EXPECT_TRUE(std::isnan(bf16)) << bits;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(bf16), bits << 16) << bits;
    }
  }
}

TEST(DecodeScaleTest, Fp32MatchesTheHardwareOnRandomPatterns) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    const uint32_t bits = static_cast<uint32_t>(rng());
    const float expected = std::bit_cast<float>(bits);
    const float decoded = ReferenceDecodeScale(DataType::kFp32, bits);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(decoded));
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(decoded), bits);
    }
  }
  EXPECT_EQ(ReferenceDecodeScale(DataType::kFp32, 0x00000001u), Pow2(-149));
}

TEST(DecodeScaleTest, Fp8ScalesMatchFp8Weights) {
  for (uint32_t code = 0; code < 256; ++code) {
    const float e4m3 = ReferenceDecodeScale(DataType::kE4m3, code);
    const float e5m2 = ReferenceDecodeScale(DataType::kE5m2, code);
    const float w4 = ReferenceDecodeWeightCode(Float(4, 3), code);
    const float w5 = ReferenceDecodeWeightCode(Float(5, 2), code);
    EXPECT_TRUE(e4m3 == w4 || (std::isnan(e4m3) && std::isnan(w4))) << code;
    EXPECT_TRUE(e5m2 == w5 || (std::isnan(e5m2) && std::isnan(w5))) << code;
  }
}

TEST(DecodeScaleTest, Ue8m0) {
  EXPECT_EQ(ReferenceDecodeScale(DataType::kUe8m0, 127), 1.0f);
  EXPECT_EQ(ReferenceDecodeScale(DataType::kUe8m0, 128), 2.0f);
  EXPECT_EQ(ReferenceDecodeScale(DataType::kUe8m0, 120), Pow2(-7));
  EXPECT_EQ(ReferenceDecodeScale(DataType::kUe8m0, 0), Pow2(-127));
  EXPECT_EQ(ReferenceDecodeScale(DataType::kUe8m0, 254), Pow2(127));
  EXPECT_TRUE(std::isnan(ReferenceDecodeScale(DataType::kUe8m0, 255)));
  for (uint32_t x = 1; x < 255; ++x) {
    EXPECT_EQ(ReferenceDecodeScale(DataType::kUe8m0, x),
              2 * ReferenceDecodeScale(DataType::kUe8m0, x - 1));
  }
}

TEST(DecodeScaleTest, IntegerElements) {
  EXPECT_EQ(ReferenceDecodeScale(DataType::kInt8, 0x80), -128.0f);
  EXPECT_EQ(ReferenceDecodeScale(DataType::kInt8, 0x7F), 127.0f);
  EXPECT_EQ(ReferenceDecodeScale(DataType::kInt4, 0x9), -7.0f);
  EXPECT_EQ(ReferenceDecodeScale(DataType::kInt4, 0x3), 3.0f);
}

// ---- encode ----------------------------------------------------------------

// encode(decode(c)) == c for every non-NaN code of every encodable format.
TEST(EncodeFloatTest, RoundTripsEveryCode) {
  struct Format {
    DataType type;
    uint32_t codes;
  };
  for (const Format& f :
       {Format{DataType::kFp16, 0x10000}, Format{DataType::kBf16, 0x10000},
        Format{DataType::kE4m3, 0x100}, Format{DataType::kE5m2, 0x100},
        Format{DataType::kUe8m0, 0xFF}, Format{DataType::kInt8, 0x100},
        Format{DataType::kInt4, 0x10}}) {
    SCOPED_TRACE(DataTypeName(f.type));
    for (uint32_t code = 0; code < f.codes; ++code) {
      const float value = ReferenceDecodeScale(f.type, code);
      if (std::isnan(value)) continue;
      ASSERT_EQ(ReferenceEncodeFloat(value, f.type), code) << value;
    }
  }
}

TEST(EncodeFloatTest, NanAndOverflow) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(ReferenceEncodeFloat(nan, DataType::kFp16), 0x7E00u);
  EXPECT_EQ(ReferenceEncodeFloat(nan, DataType::kBf16), 0x7FC0u);
  EXPECT_EQ(ReferenceEncodeFloat(nan, DataType::kE4m3), 0x7Fu);
  EXPECT_EQ(ReferenceEncodeFloat(nan, DataType::kE5m2), 0x7Eu);
  EXPECT_EQ(ReferenceEncodeFloat(nan, DataType::kUe8m0), 0xFFu);
  EXPECT_EQ(ReferenceEncodeFloat(65520.0f, DataType::kFp16), 0x7C00u);
  EXPECT_EQ(ReferenceEncodeFloat(65519.0f, DataType::kFp16), 0x7BFFu);
  EXPECT_EQ(ReferenceEncodeFloat(-inf, DataType::kFp16), 0xFC00u);
  EXPECT_EQ(
      ReferenceEncodeFloat(std::numeric_limits<float>::max(), DataType::kBf16),
      0x7F80u);
  EXPECT_EQ(ReferenceEncodeFloat(61440.0f, DataType::kE5m2), 0x7Cu);
  // e4m3 has no inf: saturate.
  EXPECT_EQ(ReferenceEncodeFloat(464.0f, DataType::kE4m3), 0x7Eu);  // tie
  EXPECT_EQ(ReferenceEncodeFloat(1000.0f, DataType::kE4m3), 0x7Eu);
  EXPECT_EQ(ReferenceEncodeFloat(-inf, DataType::kE4m3), 0xFEu);
}

TEST(EncodeFloatTest, TiesToEven) {
  EXPECT_EQ(ReferenceEncodeFloat(1.0f + Pow2(-11), DataType::kFp16), 0x3C00u);
  EXPECT_EQ(ReferenceEncodeFloat(1.0f + 3 * Pow2(-11), DataType::kFp16),
            0x3C02u);
  EXPECT_EQ(ReferenceEncodeFloat(Pow2(-25), DataType::kFp16), 0x0000u);
  EXPECT_EQ(ReferenceEncodeFloat(3 * Pow2(-25), DataType::kFp16), 0x0002u);
  EXPECT_EQ(ReferenceEncodeFloat(-Pow2(-26), DataType::kFp16), 0x8000u);
  EXPECT_EQ(ReferenceEncodeFloat(1.0f + Pow2(-8), DataType::kBf16), 0x3F80u);
  EXPECT_EQ(ReferenceEncodeFloat(1.0f + 3 * Pow2(-8), DataType::kBf16),
            0x3F82u);
  EXPECT_EQ(ReferenceEncodeFloat(1.0625f, DataType::kE4m3), 0x38u);
  EXPECT_EQ(ReferenceEncodeFloat(1.1875f, DataType::kE4m3), 0x3Au);
  EXPECT_EQ(ReferenceEncodeFloat(2.5f, DataType::kInt8), 2u);
  EXPECT_EQ(ReferenceEncodeFloat(3.5f, DataType::kInt8), 4u);
  EXPECT_EQ(ReferenceEncodeFloat(-2.5f, DataType::kInt8), 0xFEu);
  EXPECT_EQ(ReferenceEncodeFloat(300.0f, DataType::kInt8), 0x7Fu);
  EXPECT_EQ(ReferenceEncodeFloat(-300.0f, DataType::kInt8), 0x80u);
  EXPECT_EQ(ReferenceEncodeFloat(-9.0f, DataType::kInt4), 0x8u);
  EXPECT_EQ(ReferenceEncodeFloat(1.5f, DataType::kUe8m0), 128u);
  EXPECT_EQ(ReferenceEncodeFloat(1.49f, DataType::kUe8m0), 127u);
  EXPECT_EQ(ReferenceEncodeFloat(0.0f, DataType::kUe8m0), 0xFFu);
  EXPECT_EQ(ReferenceEncodeFloat(1.0f, DataType::kFp32), 0x3F800000u);
}

// Random floats: the encoding decodes to a nearest representable value, and
// on an exact tie the chosen code is even.
TEST(EncodeFloatTest, RandomValuesRoundToNearest) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  struct Format {
    DataType type;
    int min_exponent, max_exponent;
  };
  for (const Format& f :
       {Format{DataType::kFp16, -26, 15}, Format{DataType::kBf16, -134, 127},
        Format{DataType::kE4m3, -10, 8}, Format{DataType::kE5m2, -17, 15}}) {
    SCOPED_TRACE(DataTypeName(f.type));
    std::uniform_int_distribution<int> exponent(f.min_exponent, f.max_exponent);
    for (int i = 0; i < 5000; ++i) {
      float x = std::ldexp(mantissa(rng), exponent(rng));
      if (rng() % 2) x = -x;
      const uint32_t code = ReferenceEncodeFloat(x, f.type);
      const float y = ReferenceDecodeScale(f.type, code);
      if (std::isinf(y)) continue;  // overflowed, checked elsewhere
      ASSERT_FALSE(std::isnan(y)) << x;
      const double error = std::fabs(double{y} - x);
      for (int step : {-1, 1}) {
        const uint32_t neighbor = code + step;
        // Stay within the same sign half so "neighbor" is adjacent in value.
        if ((neighbor ^ code) >> (DataTypeBytes(f.type) * 8 - 1)) continue;
        const float z = ReferenceDecodeScale(f.type, neighbor);
        if (!std::isfinite(z)) continue;
        const double other = std::fabs(double{z} - x);
        ASSERT_LE(error, other) << x << " code " << code;
        if (error == other) {
          ASSERT_EQ(code % 2, 0u) << x;
        }
      }
    }
  }
}

}  // namespace
}  // namespace hummingd
