// ReferenceQuantize against ReferenceDequantize: for every spec of the grid
// the round trip stays within the format's quantization error, the codes
// span the format's range, and the buffers follow the dequant contract.

#include "kernels/reference/quantize_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/quant_spec.h"
#include "kernels/reference/dequant_reference.h"
#include "kernels/reference/format_reference.h"
#include "kernels/reference/weight_packing.h"
#include "tests/unit/kernels/quantize/quantize_grid.h"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd {
namespace {

// Rows of different magnitudes, a few outliers, never all zero.
std::vector<float> RandomWeights(int64_t n, int64_t k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> w(n * k);
  for (int64_t r = 0; r < n; ++r) {
    const float magnitude = std::ldexp(1.0f, static_cast<int>(r % 7) - 4);
    for (int64_t c = 0; c < k; ++c) {
      float v = unit(rng) * magnitude;
      if (rng() % 61 == 0) v *= 4.0f;
      w[r * k + c] = v;
    }
  }
  return w;
}

float ScaleAt(const QuantSpec& spec, const DequantInputs& in, int64_t e) {
  const int bytes = DataTypeBytes(spec.scale_type);
  uint32_t raw = 0;
  for (int b = 0; b < bytes; ++b)
    raw |= uint32_t{in.scales[e * bytes + b]} << (8 * b);
  return ReferenceDecodeScale(spec.scale_type, raw);
}

float ZeroAt(const QuantSpec& spec, const DequantInputs& in, int64_t e) {
  if (spec.zero_point == ZeroPointKind::kInteger) return in.zero_points[e];
  if (spec.zero_point == ZeroPointKind::kFloat) {
    const uint32_t raw =
        in.zero_points[2 * e] | (uint32_t{in.zero_points[2 * e + 1]} << 8);
    return ReferenceDecodeScale(spec.activation_type, raw);
  }
  return 0.0f;
}

// Relative error of a scale rounded to nearest in its dtype (8-bit scales
// round up, so nothing overflows through them).
double ScaleRoundingError(DataType type) {
  switch (type) {
    case DataType::kFp16:
      return std::ldexp(1.0, -11);
    case DataType::kBf16:
      return std::ldexp(1.0, -8);
    default:
      return std::ldexp(1.0, -23);
  }
}

int MaxFloatMagnitudeCode(const WeightType& type) {
  int best = 0;
  for (int code = 0; code < (1 << (type.bits - 1)); ++code) {
    if (!ReferenceWeightCodeIsSpecial(type, code)) best = code;
  }
  return best;
}

TEST(QuantizeReferenceTest, RoundTripWithinQuantizationErrorForEverySpec) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  for (const testing::QuantizeGridSpec& grid : testing::QuantizeGrid()) {
    SCOPED_TRACE(grid.text);
    absl::StatusOr<QuantSpec> parsed = ParseSpecText(grid.text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    const QuantSpec spec = Canonicalize(*parsed);
    ASSERT_TRUE(ValidateSpec(spec).ok()) << ValidateSpec(spec);
    LayerShape shape;
    shape.n = grid.n;
    shape.k = grid.k;
    const std::vector<float> w = RandomWeights(shape.n, shape.k, seed);
    absl::StatusOr<DequantInputs> q = ReferenceQuantize(spec, shape, w);
    ASSERT_TRUE(q.ok()) << q.status();
    ASSERT_EQ(q->secondary_scales.size(),
              spec.secondary_scale == SecondaryScale::kNone ? 0u
              : spec.secondary_scale == SecondaryScale::kTensor
                  ? 1u
                  : size_t(shape.n));
    for (float t : q->secondary_scales) EXPECT_EQ(t, 1.0f);
    absl::StatusOr<std::vector<float>> back =
        ReferenceDequantize(spec, shape, *q);
    ASSERT_TRUE(back.ok()) << back.status();
    absl::StatusOr<std::vector<uint8_t>> codes =
        UnpackCodes(q->weights, shape.n, shape.k, spec.weight.bits);
    ASSERT_TRUE(codes.ok());

    // Entry-wise absolute maximum, for the saturation allowance.
    const int64_t entries =
        static_cast<int64_t>(q->scales.size()) / DataTypeBytes(spec.scale_type);
    std::vector<float> absmax(entries, 0.0f);
    for (int64_t r = 0; r < shape.n; ++r) {
      for (int64_t c = 0; c < shape.k; ++c) {
        const int64_t e = ScaleEntryIndex(spec, shape, r, c);
        absmax[e] = std::max(absmax[e], std::fabs(w[r * shape.k + c]));
      }
    }
    const double scale_error = ScaleRoundingError(spec.scale_type);
    const bool is_float = spec.weight.kind == WeightKind::kFloat;
    const int bias = is_float ? (1 << (spec.weight.exponent_bits - 1)) - 1 : 0;
    int min_code = 255;
    int max_code = 0;
    int max_float_magnitude = 0;
    int64_t failures = 0;
    for (int64_t r = 0; r < shape.n; ++r) {
      for (int64_t c = 0; c < shape.k; ++c) {
        const int64_t i = r * shape.k + c;
        const int64_t e = ScaleEntryIndex(spec, shape, r, c);
        const double s = ScaleAt(spec, *q, e);
        double bound;
        if (is_float) {
          bound = std::fabs(w[i]) *
                      std::ldexp(1.0, -(spec.weight.mantissa_bits + 1)) +
                  s * std::ldexp(1.0, -bias - spec.weight.mantissa_bits);
        } else if (spec.weight.kind == WeightKind::kUint &&
                   spec.zero_point == ZeroPointKind::kNone &&
                   spec.weight.bits == 1) {
          bound = absmax[e];  // {-1, 0} * s: positive values clip to 0
        } else {
          bound =
              0.5 * s + s * std::fabs(ZeroAt(spec, *q, e)) * scale_error * 8;
        }
        bound += absmax[e] * (2 * scale_error) + 1e-6 * absmax[e];
        const double err = std::fabs(double{w[i]} - double{(*back)[i]});
        if (err > bound && ++failures < 5) {
          ADD_FAILURE() << "(" << r << ", " << c << "): w=" << w[i]
                        << " back=" << (*back)[i] << " scale=" << s
                        << " bound=" << bound;
        }
        const int code = (*codes)[i];
        min_code = std::min(min_code, code);
        max_code = std::max(max_code, code);
        if (is_float) {
          max_float_magnitude = std::max(
              max_float_magnitude, code & ((1 << (spec.weight.bits - 1)) - 1));
        }
      }
    }
    EXPECT_EQ(failures, 0);
    // The largest magnitude maps to the largest code, up to how far an
    // 8-bit scale may have been rounded up.
    const double up = spec.scale_type == DataType::kUe8m0  ? 2.0
                      : spec.scale_type == DataType::kE4m3 ? 1.125
                      : spec.scale_type == DataType::kE5m2 ? 1.25
                                                           : 1.0;
    const int top = (1 << spec.weight.bits) - 1;
    const int half = 1 << (spec.weight.bits - 1);
    if (is_float) {
      const int slack = up > 1.0 ? (1 << spec.weight.mantissa_bits) + 1 : 1;
      EXPECT_GE(max_float_magnitude,
                MaxFloatMagnitudeCode(spec.weight) - slack);
    } else if (spec.weight.kind == WeightKind::kInt) {
      // Two's complement: the reach is the larger of the two ends.
      int most_negative = 0;
      int most_positive = 0;
      for (uint8_t code : *codes) {
        const int v = code >= half ? code - (1 << spec.weight.bits) : code;
        most_negative = std::min(most_negative, v);
        most_positive = std::max(most_positive, v);
      }
      EXPECT_GE(std::max(-most_negative, most_positive),
                static_cast<int>((half - 1) / up) - 1);
    } else if (spec.zero_point == ZeroPointKind::kNone) {
      if (spec.weight.bits > 1) {
        EXPECT_GE(std::max(max_code - half, half - min_code),
                  static_cast<int>((half - 1) / up) - 1);
      }
    } else {
      EXPECT_GE(max_code - min_code, static_cast<int>(top / up) - 1);
    }
    EXPECT_TRUE(std::any_of(back->begin(), back->end(),
                            [](float v) { return v != 0; }));
  }
}

TEST(QuantizeReferenceTest, AllZeroEntryGetsUnitScaleAndZeroValues) {
  const QuantSpec spec =
      Canonicalize(*ParseSpecText("weight=uint4,group=32,scale=fp16"));
  LayerShape shape;
  shape.n = 2;
  shape.k = 64;
  std::vector<float> w(shape.n * shape.k, 0.0f);
  for (int64_t c = 32; c < 64; ++c) w[c] = 0.25f * static_cast<float>(c - 40);
  absl::StatusOr<DequantInputs> q = ReferenceQuantize(spec, shape, w);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(ScaleAt(spec, *q, 0), 1.0f);  // the all-zero group
  EXPECT_NE(ScaleAt(spec, *q, 1), 1.0f);
  absl::StatusOr<std::vector<float>> back =
      ReferenceDequantize(spec, shape, *q);
  ASSERT_TRUE(back.ok());
  for (int64_t c = 0; c < 32; ++c) EXPECT_EQ((*back)[c], 0.0f);
  // 0.25 * 23 = 5.75 is the absmax: scale 5.75 / 7, so w = 0 stays exact.
  EXPECT_EQ((*back)[40], 0.0f);
  EXPECT_NEAR((*back)[63], 5.75f, 1e-2f);
}

TEST(QuantizeReferenceTest, RefusesWrongSizeAndNonFiniteValues) {
  const QuantSpec spec =
      Canonicalize(*ParseSpecText("weight=int4,group=32,scale=fp16"));
  LayerShape shape;
  shape.n = 2;
  shape.k = 32;
  std::vector<float> w(63, 1.0f);
  absl::StatusOr<DequantInputs> q = ReferenceQuantize(spec, shape, w);
  EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(q.status().message().find("quantize.weights"), std::string::npos);
  w.push_back(std::nanf(""));
  q = ReferenceQuantize(spec, shape, w);
  EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(q.status().message().find("not finite"), std::string::npos);
}

}  // namespace
}  // namespace hummingd
