#include "kernels/reference/dequant_reference.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "kernels/quant_spec.h"
#include "kernels/reference/format_reference.h"
#include "kernels/reference/weight_packing.h"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd {
namespace {

// Little-endian bytes of `values` encoded in `type`.
std::vector<uint8_t> Encode(const std::vector<float>& values, DataType type) {
  std::vector<uint8_t> bytes;
  for (float v : values) {
    const uint32_t bits = ReferenceEncodeFloat(v, type);
    for (int b = 0; b < DataTypeBytes(type); ++b) {
      bytes.push_back(static_cast<uint8_t>(bits >> (8 * b)));
    }
  }
  return bytes;
}

std::vector<uint32_t> Pack(const std::vector<uint8_t>& codes, int64_t n,
                           int64_t k, int bits) {
  absl::StatusOr<std::vector<uint32_t>> words = PackCodes(codes, n, k, bits);
  EXPECT_TRUE(words.ok()) << words.status();
  return words.ok() ? *words : std::vector<uint32_t>{};
}

std::vector<float> Dequantize(const QuantSpec& spec, const LayerShape& shape,
                              const DequantInputs& inputs) {
  absl::StatusOr<std::vector<float>> out =
      ReferenceDequantize(spec, shape, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<float>{};
}

LayerShape Dense(int64_t n, int64_t k) {
  return {n, k, GemmKind::kDense, 0, 0};
}

// uint4, group 16, fp16 scales, implicit midpoint 8.
TEST(ReferenceDequantizeTest, GroupScalesWithImplicitMidpoint) {
  QuantSpec spec;
  spec.group_size = 16;
  const LayerShape shape = Dense(1, 32);
  std::vector<uint8_t> codes(32);
  for (int c = 0; c < 32; ++c) codes[c] = static_cast<uint8_t>(c % 16);
  DequantInputs in;
  in.weights = Pack(codes, 1, 32, 4);
  in.scales = Encode({0.5f, 2.0f}, DataType::kFp16);
  const std::vector<float> out = Dequantize(spec, shape, in);
  ASSERT_EQ(out.size(), 32u);
  EXPECT_EQ(out[0], -4.0f);    // (0 - 8) * 0.5
  EXPECT_EQ(out[9], 0.5f);     // (9 - 8) * 0.5
  EXPECT_EQ(out[15], 3.5f);    // (15 - 8) * 0.5
  EXPECT_EQ(out[16], -16.0f);  // (0 - 8) * 2
  EXPECT_EQ(out[31], 14.0f);   // (15 - 8) * 2
  EXPECT_EQ(out[24], 0.0f);
}

// uint4, per-channel fp32 scales, integer zero points.
TEST(ReferenceDequantizeTest, ChannelScalesWithIntegerZeroPoints) {
  QuantSpec spec;
  spec.granularity = ScaleGranularity::kChannel;
  spec.scale_type = DataType::kFp32;
  spec.zero_point = ZeroPointKind::kInteger;
  const LayerShape shape = Dense(2, 32);
  std::vector<uint8_t> codes(64);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 32; ++c) codes[r * 32 + c] = (c * 5 + r) % 16;
  }
  DequantInputs in;
  in.weights = Pack(codes, 2, 32, 4);
  in.scales = Encode({0.25f, 3.0f}, DataType::kFp32);
  in.zero_points = {3, 12};
  const std::vector<float> out = Dequantize(spec, shape, in);
  ASSERT_EQ(out.size(), 64u);
  EXPECT_EQ(out[0], (0 - 3) * 0.25f);
  EXPECT_EQ(out[3], (15 - 3) * 0.25f);
  EXPECT_EQ(out[32 + 0], (1 - 12) * 3.0f);
  EXPECT_EQ(out[32 + 2], (11 - 12) * 3.0f);
  for (int c = 0; c < 32; ++c) {
    EXPECT_EQ(out[32 + c], (((c * 5 + 1) % 16) - 12) * 3.0f) << c;
  }
}

// uint8, tensor bf16 scale, bf16 float zero point.
TEST(ReferenceDequantizeTest, TensorScaleWithFloatZeroPoint) {
  QuantSpec spec;
  spec.weight = {WeightKind::kUint, 8, 0, 0};
  spec.granularity = ScaleGranularity::kTensor;
  spec.scale_type = DataType::kBf16;
  spec.zero_point = ZeroPointKind::kFloat;
  spec.activation_type = DataType::kBf16;
  const LayerShape shape = Dense(2, 32);
  std::vector<uint8_t> codes(64);
  for (int i = 0; i < 64; ++i) codes[i] = static_cast<uint8_t>(i * 4 + 1);
  DequantInputs in;
  in.weights = Pack(codes, 2, 32, 8);
  in.scales = Encode({0.125f}, DataType::kBf16);
  in.zero_points = Encode({100.5f}, DataType::kBf16);
  ASSERT_EQ(in.zero_points.size(), 2u);
  const std::vector<float> out = Dequantize(spec, shape, in);
  ASSERT_EQ(out.size(), 64u);
  EXPECT_EQ(out[0], (1 - 100.5f) * 0.125f);
  EXPECT_EQ(out[25], (101 - 100.5f) * 0.125f);
  EXPECT_EQ(out[63], (253 - 100.5f) * 0.125f);
}

// e4m3 weights, 16x16 blocks of fp32 scales over a 32x32 matrix.
TEST(ReferenceDequantizeTest, BlockScalesWithFloatWeights) {
  QuantSpec spec;
  spec.weight = {WeightKind::kFloat, 8, 4, 3};
  spec.granularity = ScaleGranularity::kBlock;
  spec.block_n = 16;
  spec.block_k = 16;
  spec.scale_type = DataType::kFp32;
  const LayerShape shape = Dense(32, 32);
  std::vector<uint8_t> codes(32 * 32, 0x38);  // 1.0
  codes[0] = 0x7E;                            // 448 in block (0, 0)
  codes[17] = 0xC0;                           // -2 in block (0, 1)
  codes[20 * 32 + 3] = 0x3C;                  // 1.5 in block (1, 0)
  codes[31 * 32 + 31] = 0x01;                 // 2^-9 in block (1, 1)
  DequantInputs in;
  in.weights = Pack(codes, 32, 32, 8);
  in.scales = Encode({1.0f, 2.0f, 4.0f, 8.0f}, DataType::kFp32);
  const std::vector<float> out = Dequantize(spec, shape, in);
  ASSERT_EQ(out.size(), 1024u);
  EXPECT_EQ(out[0], 448.0f);
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_EQ(out[17], -4.0f);
  EXPECT_EQ(out[15 * 32 + 16], 2.0f);
  EXPECT_EQ(out[20 * 32 + 3], 6.0f);
  EXPECT_EQ(out[16 * 32 + 0], 4.0f);
  EXPECT_EQ(out[31 * 32 + 31], std::ldexp(8.0f, -9));
  EXPECT_EQ(out[16 * 32 + 16], 8.0f);
}

// int4 weights, ue8m0 tensor scale, fp32 tensor secondary scale.
TEST(ReferenceDequantizeTest, IntWeightsWithSecondaryTensorScale) {
  QuantSpec spec;
  spec.weight = {WeightKind::kInt, 4, 0, 0};
  spec.granularity = ScaleGranularity::kTensor;
  spec.scale_type = DataType::kUe8m0;
  spec.secondary_scale = SecondaryScale::kTensor;
  const LayerShape shape = Dense(1, 32);
  std::vector<uint8_t> codes(32);
  for (int c = 0; c < 32; ++c) codes[c] = static_cast<uint8_t>(c % 16);
  DequantInputs in;
  in.weights = Pack(codes, 1, 32, 4);
  in.scales = {124};  // 2^-3
  in.secondary_scales = {3.0f};
  const std::vector<float> out = Dequantize(spec, shape, in);
  ASSERT_EQ(out.size(), 32u);
  EXPECT_EQ(out[7], 7 * 0.125f * 3);
  EXPECT_EQ(out[8], -8 * 0.125f * 3);
  EXPECT_EQ(out[15], -1 * 0.125f * 3);
  EXPECT_EQ(out[17], 1 * 0.125f * 3);
}

// NVFP4-style: e2m1 weights, group 16 e4m3 scales, per-row secondary.
TEST(ReferenceDequantizeTest, Fp4WithFp8GroupScalesAndChannelSecondary) {
  QuantSpec spec;
  spec.weight = {WeightKind::kFloat, 4, 2, 1};
  spec.group_size = 16;
  spec.scale_type = DataType::kE4m3;
  spec.secondary_scale = SecondaryScale::kChannel;
  const LayerShape shape = Dense(2, 32);
  std::vector<uint8_t> codes(64);
  for (int i = 0; i < 64; ++i) codes[i] = static_cast<uint8_t>(i % 16);
  DequantInputs in;
  in.weights = Pack(codes, 2, 32, 4);
  in.scales = {0x38, 0x40, 0x30, 0x44};  // 1, 2, 0.5, 3
  in.secondary_scales = {1.0f, 0.25f};
  const std::vector<float> out = Dequantize(spec, shape, in);
  ASSERT_EQ(out.size(), 64u);
  EXPECT_EQ(out[7], 6.0f);          // code 7 = 6, scale 1
  EXPECT_EQ(out[16 + 15], -12.0f);  // code 15 = -6, scale 2
  EXPECT_EQ(out[32 + 3], 1.5f * 0.5f * 0.25f);
  EXPECT_EQ(out[32 + 16 + 6], 4.0f * 3.0f * 0.25f);
}

TEST(ReferenceDequantizeTest, ReportsTheBadBuffer) {
  QuantSpec spec;
  spec.group_size = 32;
  spec.zero_point = ZeroPointKind::kInteger;
  spec.secondary_scale = SecondaryScale::kChannel;
  const LayerShape shape = Dense(2, 64);
  DequantInputs good;
  good.weights = std::vector<uint32_t>(2 * 8, 0x12345678u);
  good.scales = Encode({1, 2, 3, 4}, DataType::kFp16);
  good.zero_points = {1, 2, 3, 4};
  good.secondary_scales = {1, 2};
  ASSERT_TRUE(ReferenceDequantize(spec, shape, good).ok());

  auto expect_names = [&](const DequantInputs& in, const std::string& field) {
    const absl::Status status = ReferenceDequantize(spec, shape, in).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(status.message()).rfind(field + ":", 0), 0u)
        << status;
  };
  DequantInputs in = good;
  in.weights.pop_back();
  expect_names(in, "dequant.weights");
  in = good;
  in.scales.push_back(0);
  expect_names(in, "dequant.scales");
  in = good;
  in.zero_points.clear();
  expect_names(in, "dequant.zero_points");
  in = good;
  in.zero_points[2] = 16;  // outside uint4
  expect_names(in, "dequant.zero_points");
  in = good;
  in.secondary_scales = {1};
  expect_names(in, "dequant.secondary_scales");

  QuantSpec bad = spec;
  bad.group_size = 48;
  EXPECT_EQ(ReferenceDequantize(bad, shape, good).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReferenceDequantize(spec, Dense(2, 48), good).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DequantBufferLayoutTest, SizesPerGranularity) {
  QuantSpec spec;
  spec.group_size = 64;
  spec.zero_point = ZeroPointKind::kFloat;
  absl::StatusOr<DequantLayout> layout =
      DequantBufferLayout(spec, Dense(8, 256));
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->weight_words, 8 * 256 * 4 / 32);
  EXPECT_EQ(layout->scale_rows, 8);
  EXPECT_EQ(layout->scale_cols, 4);
  EXPECT_EQ(layout->scale_bytes, 64);
  EXPECT_EQ(layout->zero_point_bytes, 64);
  EXPECT_EQ(layout->secondary_entries, 0);

  spec = QuantSpec{};
  spec.weight = {WeightKind::kUint, 3, 0, 0};
  spec.granularity = ScaleGranularity::kBlock;
  spec.block_n = 32;
  spec.block_k = 64;
  spec.scale_type = DataType::kFp32;
  spec.secondary_scale = SecondaryScale::kChannel;
  const LayerShape shape = Dense(96, 128);
  layout = DequantBufferLayout(spec, shape);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->weight_words, 96 * 128 * 3 / 32);
  EXPECT_EQ(layout->scale_rows, 3);
  EXPECT_EQ(layout->scale_cols, 2);
  EXPECT_EQ(layout->scale_bytes, 24);
  EXPECT_EQ(layout->zero_point_bytes, 0);
  EXPECT_EQ(layout->secondary_entries, 96);
  EXPECT_EQ(ScaleEntryIndex(spec, shape, 95, 127), 5);
  EXPECT_EQ(ScaleEntryIndex(spec, shape, 33, 10), 2);
}

TEST(RoundToOutputBitsTest, RoundsToNearestEven) {
  const std::vector<float> values = {1.0f, 65520.0f, -0.5f,
                                     1.0f + std::ldexp(1.0f, -11)};
  absl::StatusOr<std::vector<uint16_t>> fp16 =
      RoundToOutputBits(values, DataType::kFp16);
  ASSERT_TRUE(fp16.ok());
  EXPECT_EQ(*fp16, (std::vector<uint16_t>{0x3C00, 0x7C00, 0xB800, 0x3C00}));
  absl::StatusOr<std::vector<uint16_t>> bf16 =
      RoundToOutputBits(values, DataType::kBf16);
  ASSERT_TRUE(bf16.ok());
  EXPECT_EQ(*bf16, (std::vector<uint16_t>{0x3F80, 0x4780, 0xBF00, 0x3F80}));
  EXPECT_EQ(RoundToOutputBits(values, DataType::kFp32).status().code(),
            absl::StatusCode::kInvalidArgument);
}

std::vector<QuantSpec> RandomInputSpecs() {
  std::vector<QuantSpec> specs;
  for (int bits = 1; bits <= 8; ++bits) {
    QuantSpec spec;
    spec.weight = {WeightKind::kUint, bits, 0, 0};
    spec.group_size = 32;
    specs.push_back(spec);
    spec.zero_point = ZeroPointKind::kInteger;
    spec.granularity = ScaleGranularity::kChannel;
    spec.scale_type = DataType::kBf16;
    specs.push_back(spec);
    spec.zero_point = ZeroPointKind::kFloat;
    spec.activation_type = DataType::kBf16;
    specs.push_back(spec);
  }
  for (int e = 1; e <= 5; ++e) {
    for (int m = 0; 1 + e + m <= 8; ++m) {
      QuantSpec spec;
      spec.weight = {WeightKind::kFloat, 1 + e + m, e, m};
      spec.granularity = ScaleGranularity::kBlock;
      spec.block_n = 16;
      spec.block_k = 32;
      spec.scale_type = (e + m) % 2 ? DataType::kE4m3 : DataType::kUe8m0;
      spec.secondary_scale = SecondaryScale::kTensor;
      specs.push_back(spec);
    }
  }
  QuantSpec int8;
  int8.weight = {WeightKind::kInt, 8, 0, 0};
  int8.granularity = ScaleGranularity::kTensor;
  int8.scale_type = DataType::kE5m2;
  int8.secondary_scale = SecondaryScale::kChannel;
  specs.push_back(int8);
  return specs;
}

TEST(MakeRandomDequantInputsTest, ValidDeterministicAndNeverZero) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const LayerShape shape = Dense(32, 64);
  for (const QuantSpec& spec : RandomInputSpecs()) {
    SCOPED_TRACE(FormatSpecText(Canonicalize(spec)));
    ASSERT_TRUE(ValidateSpec(spec).ok()) << ValidateSpec(spec);
    const DequantInputs in = MakeRandomDequantInputs(spec, shape, seed);
    const DequantInputs again = MakeRandomDequantInputs(spec, shape, seed);
    const DequantInputs other = MakeRandomDequantInputs(spec, shape, seed + 1);
    EXPECT_EQ(in.weights, again.weights);
    EXPECT_EQ(in.scales, again.scales);
    EXPECT_NE(in.weights, other.weights);
    absl::StatusOr<DequantLayout> layout = DequantBufferLayout(spec, shape);
    ASSERT_TRUE(layout.ok());
    for (int64_t e = 0; e < layout->scale_entries; ++e) {
      uint32_t bits = 0;
      const int bytes = DataTypeBytes(spec.scale_type);
      for (int b = 0; b < bytes; ++b)
        bits |= uint32_t{in.scales[e * bytes + b]} << (8 * b);
      const float scale = ReferenceDecodeScale(spec.scale_type, bits);
      EXPECT_TRUE(std::isfinite(scale) && scale > 0) << scale;
    }
    const std::vector<float> out = Dequantize(spec, shape, in);
    ASSERT_EQ(out.size(), 32u * 64u);
    int non_zero = 0;
    for (float v : out) {
      ASSERT_TRUE(std::isfinite(v));
      non_zero += v != 0;
    }
    EXPECT_GT(non_zero, 0);
  }
}

// FNV-1a over the weight words, then the scale and zero-point bytes.
uint64_t InputsHash(const DequantInputs& in) {
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&hash](uint64_t value) {
    hash ^= value;
    hash *= 1099511628211ull;
  };
  for (uint32_t word : in.weights) mix(word);
  for (uint8_t byte : in.scales) mix(byte);
  for (uint8_t byte : in.zero_points) mix(byte);
  return hash;
}

// A seed gives the same tensors from commit to commit, so that benchmark
// rows and failures replay across builds (the values were taken at 5044abd,
// before the generator was made faster, and still hold).
TEST(MakeRandomDequantInputsTest, SeedGivesTheSameTensorsAcrossCommits) {
  const struct {
    const char* spec;
    uint64_t hash;
  } kPinned[] = {
      {"weight=uint4,group=128,scale=fp16", 0x1bf2e4eaf5fb1754ull},
      {"weight=uint3,group=32,scale=bf16,act=bf16,out=bf16",
       0xea0d3005a08b5507ull},
      {"weight=e4m3,group=128,scale=fp16", 0x8ff1a3f3aff09569ull},
      {"weight=uint5,group=64,scale=fp16,zero=int", 0x0e0b21c7d2f422a2ull},
      {"weight=e2m1,group=32,scale=ue8m0,act=bf16,out=bf16",
       0x7049e5c956e01047ull},
  };
  for (const auto& pinned : kPinned) {
    SCOPED_TRACE(pinned.spec);
    absl::StatusOr<QuantSpec> spec = ParseSpecText(pinned.spec);
    ASSERT_TRUE(spec.ok()) << spec.status();
    const DequantInputs in =
        MakeRandomDequantInputs(Canonicalize(*spec), Dense(64, 256), 77);
    ASSERT_FALSE(in.weights.empty());
    EXPECT_EQ(InputsHash(in), pinned.hash);
  }
}

TEST(MakeRandomDequantInputsTest, InvalidSpecGivesEmptyBuffers) {
  QuantSpec spec;
  spec.group_size = 100;
  const DequantInputs in = MakeRandomDequantInputs(spec, Dense(4, 64), 1);
  EXPECT_TRUE(in.weights.empty());
  EXPECT_TRUE(in.scales.empty());
}

}  // namespace
}  // namespace hummingd
