#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "kernels/quant_spec.h"

namespace hummingd {
namespace {

QuantSpec ParseOrDie(std::string_view text) {
  absl::StatusOr<QuantSpec> spec = ParseSpecText(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  return spec.ok() ? *spec : QuantSpec{};
}

TEST(SpecTextTest, ParsesTheHeaderExample) {
  const QuantSpec spec = ParseOrDie(
      "weight=uint4,group=128,scale=fp16,zero=int,act=fp16,out=bf16");
  EXPECT_EQ(spec.weight, (WeightType{WeightKind::kUint, 4, 0, 0}));
  EXPECT_EQ(spec.granularity, ScaleGranularity::kGroup);
  EXPECT_EQ(spec.group_size, 128);
  EXPECT_EQ(spec.zero_point, ZeroPointKind::kInteger);
  EXPECT_EQ(spec.output_type, DataType::kBf16);
  EXPECT_TRUE(ValidateSpec(spec).ok());
}

TEST(SpecTextTest, EmptyTextAndOmittedKeysGiveDefaults) {
  EXPECT_EQ(ParseOrDie(""), Canonicalize(QuantSpec{}));
  EXPECT_EQ(ParseOrDie("  \t "), Canonicalize(QuantSpec{}));
  QuantSpec expected;
  expected.has_bias = true;
  EXPECT_EQ(ParseOrDie("bias=1"), expected);
}

TEST(SpecTextTest, FormatsEveryKeyInAFixedOrder) {
  EXPECT_EQ(FormatSpecText(Canonicalize(QuantSpec{})),
            "weight=uint4,group=128,scale=fp16,zero=none,scale2=none,"
            "act=fp16,act_scale=none,out=fp16,bias=0");
  QuantSpec spec;
  spec.weight = {WeightKind::kFloat, 8, 4, 3};
  spec.granularity = ScaleGranularity::kBlock;
  spec.block_k = 128;
  spec.block_n = 64;
  spec.scale_type = DataType::kFp32;
  spec.secondary_scale = SecondaryScale::kChannel;
  spec.activation_type = DataType::kE4m3;
  spec.activation_scale = ActivationScaleMode::kPerGroup;
  spec.output_type = DataType::kBf16;
  spec.has_bias = true;
  EXPECT_EQ(FormatSpecText(Canonicalize(spec)),
            "weight=e4m3,group=128x64,scale=fp32,zero=none,scale2=channel,"
            "act=e4m3,act_scale=group,out=bf16,bias=1");
}

TEST(SpecTextTest, ToleratesWhitespaceAroundTokens) {
  const QuantSpec spec =
      ParseOrDie("  weight = int8 ,\tgroup= channel,scale =bf16 , bias= 1 ");
  EXPECT_EQ(spec.weight, (WeightType{WeightKind::kInt, 8, 0, 0}));
  EXPECT_EQ(spec.granularity, ScaleGranularity::kChannel);
  EXPECT_EQ(spec.scale_type, DataType::kBf16);
  EXPECT_TRUE(spec.has_bias);
}

TEST(SpecTextTest, WeightTokens) {
  struct Case {
    const char* text;
    WeightType weight;
  };
  for (const Case& c : {
           Case{"uint1", {WeightKind::kUint, 1, 0, 0}},
           Case{"uint8", {WeightKind::kUint, 8, 0, 0}},
           Case{"int2", {WeightKind::kInt, 2, 0, 0}},
           Case{"float8e4m3", {WeightKind::kFloat, 8, 4, 3}},
           Case{"float4e2m1", {WeightKind::kFloat, 4, 2, 1}},
           Case{"float8e5m2", {WeightKind::kFloat, 8, 5, 2}},
           Case{"e4m3", {WeightKind::kFloat, 8, 4, 3}},
           Case{"e5m2", {WeightKind::kFloat, 8, 5, 2}},
           Case{"e2m1", {WeightKind::kFloat, 4, 2, 1}},
           Case{"e3m2", {WeightKind::kFloat, 6, 3, 2}},
           Case{"e2m3", {WeightKind::kFloat, 6, 2, 3}},
           Case{"e3m4", {WeightKind::kFloat, 8, 3, 4}},
           Case{"e1m0", {WeightKind::kFloat, 2, 1, 0}},
       }) {
    const QuantSpec spec = ParseOrDie(std::string("weight=") + c.text);
    EXPECT_EQ(spec.weight, c.weight) << c.text;
  }
}

TEST(SpecTextTest, GroupTokens) {
  QuantSpec spec = ParseOrDie("group=channel");
  EXPECT_EQ(spec.granularity, ScaleGranularity::kChannel);
  EXPECT_EQ(spec.group_size, 0);  // canonical
  spec = ParseOrDie("group=tensor");
  EXPECT_EQ(spec.granularity, ScaleGranularity::kTensor);
  spec = ParseOrDie("group=32");
  EXPECT_EQ(spec.granularity, ScaleGranularity::kGroup);
  EXPECT_EQ(spec.group_size, 32);
  spec = ParseOrDie("group=128x64");
  EXPECT_EQ(spec.granularity, ScaleGranularity::kBlock);
  EXPECT_EQ(spec.block_k, 128);
  EXPECT_EQ(spec.block_n, 64);
  EXPECT_EQ(spec.group_size, 0);
}

TEST(SpecTextTest, ParseDoesNotValidate) {
  const QuantSpec spec = ParseOrDie("weight=uint9,group=100");
  EXPECT_EQ(spec.weight.bits, 9);
  EXPECT_EQ(spec.group_size, 100);
  EXPECT_EQ(ValidateSpec(spec).code(), absl::StatusCode::kInvalidArgument);
}

// Every canonical spec over a grid that walks every weight type, granularity,
// zero point, activation type and activation-scale mode (the remaining axes
// cycle through all their values) survives Format -> Parse unchanged, and
// different specs never share a text.
TEST(SpecTextTest, RoundTripsOverAGrid) {
  std::vector<WeightType> weights;
  for (int bits = 1; bits <= 8; ++bits)
    weights.push_back({WeightKind::kUint, bits, 0, 0});
  for (int bits = 2; bits <= 8; ++bits)
    weights.push_back({WeightKind::kInt, bits, 0, 0});
  for (int e = 1; e <= 7; ++e) {
    for (int m = 0; 1 + e + m <= 8; ++m) {
      weights.push_back({WeightKind::kFloat, 1 + e + m, e, m});
    }
  }
  struct Granularity {
    ScaleGranularity kind;
    int group_size, block_k, block_n;
  };
  std::vector<Granularity> granularities = {
      {ScaleGranularity::kChannel, 0, 0, 0},
      {ScaleGranularity::kTensor, 0, 0, 0},
      {ScaleGranularity::kBlock, 0, 128, 128},
      {ScaleGranularity::kBlock, 0, 16, 4096},
  };
  for (int g = 16; g <= 4096; g *= 2) {
    granularities.push_back({ScaleGranularity::kGroup, g, 0, 0});
  }
  const std::vector<DataType> scale_types = {DataType::kFp16, DataType::kBf16,
                                             DataType::kFp32, DataType::kE4m3,
                                             DataType::kE5m2, DataType::kUe8m0};
  const std::vector<DataType> act_types = {DataType::kFp16, DataType::kBf16,
                                           DataType::kE4m3, DataType::kE5m2,
                                           DataType::kInt8, DataType::kInt4};
  const std::vector<ZeroPointKind> zeros = {
      ZeroPointKind::kNone, ZeroPointKind::kInteger, ZeroPointKind::kFloat};
  const std::vector<SecondaryScale> secondaries = {
      SecondaryScale::kNone, SecondaryScale::kTensor, SecondaryScale::kChannel};
  const std::vector<ActivationScaleMode> act_scales = {
      ActivationScaleMode::kNone, ActivationScaleMode::kPerToken,
      ActivationScaleMode::kPerGroup, ActivationScaleMode::kTensor};

  std::set<std::string> texts;
  size_t count = 0;
  size_t valid = 0;
  for (const WeightType& weight : weights) {
    for (const Granularity& g : granularities) {
      for (ZeroPointKind zero : zeros) {
        for (DataType act : act_types) {
          for (ActivationScaleMode act_scale : act_scales) {
            QuantSpec spec;
            spec.weight = weight;
            spec.granularity = g.kind;
            spec.group_size = g.group_size;
            spec.block_k = g.block_k;
            spec.block_n = g.block_n;
            spec.zero_point = zero;
            spec.activation_type = act;
            spec.activation_scale = act_scale;
            spec.scale_type = scale_types[count % scale_types.size()];
            spec.secondary_scale =
                secondaries[(count / 7) % secondaries.size()];
            spec.output_type =
                (count / 3) % 2 ? DataType::kBf16 : DataType::kFp16;
            spec.has_bias = (count / 5) % 2 == 1;
            spec = Canonicalize(spec);
            ++count;
            if (ValidateSpec(spec).ok()) ++valid;
            const std::string text = FormatSpecText(spec);
            absl::StatusOr<QuantSpec> parsed = ParseSpecText(text);
            ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
            ASSERT_EQ(*parsed, spec) << text;
            texts.insert(text);
          }
        }
      }
    }
  }
  EXPECT_EQ(texts.size(), count);
  EXPECT_GT(valid, 1000u);  // the grid is not just invalid specs
}

// Each malformed text is INVALID_ARGUMENT and the message names the key.
TEST(SpecTextTest, RejectsMalformedText) {
  struct Case {
    const char* text;
    const char* names;
  };
  for (const Case& c : {
           Case{"foo=1", "unknown key 'foo'"},
           Case{"weight=uint4,Weight=uint4", "unknown key 'Weight'"},
           Case{"weight=uint4,weight=uint8", "duplicate key 'weight'"},
           Case{"group=128, group=128", "duplicate key 'group'"},
           Case{"weight=", "empty value for key 'weight'"},
           Case{"scale=  ", "empty value for key 'scale'"},
           Case{"weight", "'weight'"},
           Case{"=uint4", "unknown key ''"},
           Case{"weight=uint4,", "empty item"},
           Case{",weight=uint4", "empty item"},
           Case{"weight=uint", "key 'weight'"},
           Case{"weight=uintx", "key 'weight'"},
           Case{"weight=uint-4", "key 'weight'"},
           Case{"weight=UINT4", "key 'weight'"},
           Case{"weight=uint 4", "key 'weight'"},
           Case{"weight=uint123", "key 'weight'"},
           Case{"weight=float8e4m2", "key 'weight'"},
           Case{"weight=float8", "key 'weight'"},
           Case{"weight=e5m10", "key 'weight'"},
           Case{"weight=e4", "key 'weight'"},
           Case{"weight=e4m", "key 'weight'"},
           Case{"weight=em3", "key 'weight'"},
           Case{"weight=fp16", "key 'weight'"},
           Case{"group=abc", "key 'group'"},
           Case{"group=128x", "key 'group'"},
           Case{"group=x128", "key 'group'"},
           Case{"group=-128", "key 'group'"},
           Case{"group=1234567890", "key 'group'"},
           Case{"group=128x128x128", "key 'group'"},
           Case{"scale=fp64", "key 'scale'"},
           Case{"zero=integer", "key 'zero'"},
           Case{"scale2=row", "key 'scale2'"},
           Case{"act=fp8", "key 'act'"},
           Case{"act_scale=dynamic", "key 'act_scale'"},
           Case{"out=half", "key 'out'"},
           Case{"bias=2", "key 'bias'"},
           Case{"bias=true", "key 'bias'"},
       }) {
    absl::StatusOr<QuantSpec> spec = ParseSpecText(c.text);
    ASSERT_FALSE(spec.ok()) << c.text;
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument)
        << c.text;
    const std::string message(spec.status().message());
    EXPECT_EQ(message.rfind("spec text:", 0), 0u) << message;
    EXPECT_NE(message.find(c.names), std::string::npos)
        << c.text << " -> " << message;
  }
}

}  // namespace
}  // namespace hummingd
