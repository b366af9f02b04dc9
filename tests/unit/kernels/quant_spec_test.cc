#include "kernels/quant_spec.h"

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace hummingd {
namespace {

// Asserts INVALID_ARGUMENT whose message starts with "<field>:".
void ExpectInvalid(const absl::Status& status, std::string_view field,
                   std::string_view also_contains = "") {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  const std::string message(status.message());
  EXPECT_EQ(message.rfind(std::string(field) + ":", 0), 0u)
      << "message does not name " << field << ": " << message;
  if (!also_contains.empty()) {
    EXPECT_NE(message.find(also_contains), std::string::npos)
        << "missing '" << also_contains << "' in: " << message;
  }
}

WeightType Uint(int bits) { return {WeightKind::kUint, bits, 0, 0}; }
WeightType Int(int bits) { return {WeightKind::kInt, bits, 0, 0}; }
WeightType Float(int e, int m) { return {WeightKind::kFloat, 1 + e + m, e, m}; }

QuantSpec EightBitActivations(DataType act) {
  QuantSpec spec;
  spec.activation_type = act;
  spec.activation_scale = ActivationScaleMode::kPerToken;
  return spec;
}

// ---- Canonicalize ---------------------------------------------------------

TEST(CanonicalizeTest, ResetsGroupSizeUnlessGroup) {
  QuantSpec spec;
  spec.granularity = ScaleGranularity::kChannel;
  spec.group_size = 64;
  EXPECT_EQ(Canonicalize(spec).group_size, 0);
  spec.granularity = ScaleGranularity::kGroup;
  EXPECT_EQ(Canonicalize(spec).group_size, 64);
}

TEST(CanonicalizeTest, ResetsBlockUnlessBlock) {
  QuantSpec spec;
  spec.block_n = 128;
  spec.block_k = 64;
  const QuantSpec group = Canonicalize(spec);
  EXPECT_EQ(group.block_n, 0);
  EXPECT_EQ(group.block_k, 0);
  spec.granularity = ScaleGranularity::kBlock;
  const QuantSpec block = Canonicalize(spec);
  EXPECT_EQ(block.block_n, 128);
  EXPECT_EQ(block.block_k, 64);
  EXPECT_EQ(block.group_size, 0);
}

TEST(CanonicalizeTest, ResetsFloatFieldsUnlessFloat) {
  QuantSpec spec;
  spec.weight = {WeightKind::kUint, 4, 2, 1};
  const QuantSpec canonical = Canonicalize(spec);
  EXPECT_EQ(canonical.weight.exponent_bits, 0);
  EXPECT_EQ(canonical.weight.mantissa_bits, 0);
  EXPECT_EQ(canonical.weight.bits, 4);
  spec.weight = Float(2, 1);
  EXPECT_EQ(Canonicalize(spec).weight, Float(2, 1));
}

TEST(CanonicalizeTest, EquivalentSpecsCompareEqualAndIsIdempotent) {
  QuantSpec a;
  a.granularity = ScaleGranularity::kTensor;
  a.group_size = 32;
  a.weight = {WeightKind::kInt, 8, 4, 3};
  QuantSpec b = a;
  b.group_size = 4096;
  b.block_n = 16;
  b.weight.exponent_bits = 1;
  EXPECT_NE(a, b);
  EXPECT_EQ(Canonicalize(a), Canonicalize(b));
  EXPECT_EQ(Canonicalize(Canonicalize(a)), Canonicalize(a));
  // Fields that apply are kept.
  EXPECT_EQ(Canonicalize(a).scale_type, a.scale_type);
  EXPECT_EQ(Canonicalize(a).weight.bits, 8);
}

// ---- ValidateSpec: accepted specs -----------------------------------------

TEST(ValidateSpecTest, AcceptsCommonCheckpointFormats) {
  QuantSpec gptq;  // uint4, group 128, fp16, integer zero
  gptq.zero_point = ZeroPointKind::kInteger;
  EXPECT_TRUE(ValidateSpec(gptq).ok());

  QuantSpec awq = gptq;  // float zero point, bf16
  awq.zero_point = ZeroPointKind::kFloat;
  awq.activation_type = DataType::kBf16;
  awq.output_type = DataType::kBf16;
  awq.scale_type = DataType::kBf16;
  EXPECT_TRUE(ValidateSpec(awq).ok());

  QuantSpec deepseek = EightBitActivations(DataType::kE4m3);
  deepseek.weight = Float(4, 3);
  deepseek.granularity = ScaleGranularity::kBlock;
  deepseek.block_n = 128;
  deepseek.block_k = 128;
  deepseek.scale_type = DataType::kFp32;
  deepseek.activation_scale = ActivationScaleMode::kPerGroup;
  deepseek.output_type = DataType::kBf16;
  EXPECT_TRUE(ValidateSpec(deepseek).ok());

  QuantSpec mxfp4;
  mxfp4.weight = Float(2, 1);
  mxfp4.group_size = 32;
  mxfp4.scale_type = DataType::kUe8m0;
  mxfp4.activation_type = DataType::kBf16;
  EXPECT_TRUE(ValidateSpec(mxfp4).ok());

  QuantSpec nvfp4 = mxfp4;
  nvfp4.group_size = 16;
  nvfp4.scale_type = DataType::kE4m3;
  nvfp4.secondary_scale = SecondaryScale::kTensor;
  EXPECT_TRUE(ValidateSpec(nvfp4).ok());

  QuantSpec w8a8 = EightBitActivations(DataType::kInt8);
  w8a8.weight = Int(8);
  w8a8.granularity = ScaleGranularity::kChannel;
  w8a8.scale_type = DataType::kFp32;
  EXPECT_TRUE(ValidateSpec(w8a8).ok());

  QuantSpec w4a4 = EightBitActivations(DataType::kInt4);
  w4a4.weight = Uint(4);
  w4a4.activation_scale = ActivationScaleMode::kTensor;
  EXPECT_TRUE(ValidateSpec(w4a4).ok());
}

// ---- ValidateSpec: one test per rule --------------------------------------

TEST(ValidateSpecTest, UintBitsOneToEight) {
  for (int bits = 1; bits <= 8; ++bits) {
    QuantSpec spec;
    spec.weight = Uint(bits);
    EXPECT_TRUE(ValidateSpec(spec).ok()) << bits;
  }
  for (int bits : {0, 9, -1, 16}) {
    QuantSpec spec;
    spec.weight = Uint(bits);
    ExpectInvalid(ValidateSpec(spec), "spec.weight.bits",
                  "(got " + std::to_string(bits) + ")");
  }
}

TEST(ValidateSpecTest, IntBitsTwoToEight) {
  for (int bits = 2; bits <= 8; ++bits) {
    QuantSpec spec;
    spec.weight = Int(bits);
    EXPECT_TRUE(ValidateSpec(spec).ok()) << bits;
  }
  for (int bits : {1, 9, 0}) {
    QuantSpec spec;
    spec.weight = Int(bits);
    ExpectInvalid(ValidateSpec(spec), "spec.weight.bits");
  }
}

TEST(ValidateSpecTest, FloatNeedsAnExponentBit) {
  QuantSpec spec;
  spec.weight = {WeightKind::kFloat, 4, 0, 3};
  ExpectInvalid(ValidateSpec(spec), "spec.weight.exponent_bits", "(got 0)");
}

TEST(ValidateSpecTest, FloatMantissaNonNegative) {
  QuantSpec spec;
  spec.weight = {WeightKind::kFloat, 4, 4, -1};
  ExpectInvalid(ValidateSpec(spec), "spec.weight.mantissa_bits", "(got -1)");
}

TEST(ValidateSpecTest, FloatBitsMatchSignExponentMantissa) {
  QuantSpec spec;
  spec.weight = {WeightKind::kFloat, 8, 4, 2};
  ExpectInvalid(ValidateSpec(spec), "spec.weight.bits", "bits=8");
}

TEST(ValidateSpecTest, FloatBitsAtMostEight) {
  QuantSpec spec;
  spec.activation_type = DataType::kBf16;
  spec.weight = Float(5, 3);  // 9 bits
  ExpectInvalid(ValidateSpec(spec), "spec.weight.bits");
  // Every float format of <= 8 bits with E <= 5 is accepted with fp16.
  for (int e = 1; e <= 5; ++e) {
    for (int m = 0; 1 + e + m <= 8; ++m) {
      spec.weight = Float(e, m);
      spec.activation_type = DataType::kFp16;
      EXPECT_TRUE(ValidateSpec(spec).ok()) << e << " " << m;
    }
  }
}

TEST(ValidateSpecTest, GroupSizePowerOfTwoInRange) {
  for (int g = 16; g <= 4096; g *= 2) {
    QuantSpec spec;
    spec.group_size = g;
    EXPECT_TRUE(ValidateSpec(spec).ok()) << g;
  }
  for (int g : {100, 8, 0, -16, 8192, 48}) {
    QuantSpec spec;
    spec.group_size = g;
    ExpectInvalid(ValidateSpec(spec), "spec.group_size",
                  "(got " + std::to_string(g) + ")");
  }
}

TEST(ValidateSpecTest, BlockNPowerOfTwoInRange) {
  QuantSpec spec;
  spec.granularity = ScaleGranularity::kBlock;
  spec.block_k = 128;
  for (int n : {0, 100, 8, 8192}) {
    spec.block_n = n;
    ExpectInvalid(ValidateSpec(spec), "spec.block_n");
  }
  spec.block_n = 16;
  EXPECT_TRUE(ValidateSpec(spec).ok());
}

TEST(ValidateSpecTest, BlockKPowerOfTwoInRange) {
  QuantSpec spec;
  spec.granularity = ScaleGranularity::kBlock;
  spec.block_n = 128;
  for (int k : {0, 96, 4, 1 << 13}) {
    spec.block_k = k;
    ExpectInvalid(ValidateSpec(spec), "spec.block_k");
  }
  spec.block_k = 4096;
  EXPECT_TRUE(ValidateSpec(spec).ok());
}

TEST(ValidateSpecTest, ScaleTypeIsAScaleDtype) {
  for (DataType type : {DataType::kFp16, DataType::kBf16, DataType::kFp32,
                        DataType::kE4m3, DataType::kE5m2, DataType::kUe8m0}) {
    QuantSpec spec;
    spec.scale_type = type;
    EXPECT_TRUE(ValidateSpec(spec).ok()) << DataTypeName(type);
  }
  for (DataType type : {DataType::kInt8, DataType::kInt4,
                        static_cast<DataType>(0), static_cast<DataType>(42)}) {
    QuantSpec spec;
    spec.scale_type = type;
    ExpectInvalid(ValidateSpec(spec), "spec.scale_type");
  }
}

TEST(ValidateSpecTest, ZeroPointRequiresUintWeights) {
  for (ZeroPointKind zero : {ZeroPointKind::kInteger, ZeroPointKind::kFloat}) {
    QuantSpec spec;
    spec.zero_point = zero;
    spec.weight = Int(4);
    ExpectInvalid(ValidateSpec(spec), "spec.zero_point", "int4");
    spec.weight = Float(2, 1);
    ExpectInvalid(ValidateSpec(spec), "spec.zero_point", "e2m1");
    spec.weight = Uint(3);
    EXPECT_TRUE(ValidateSpec(spec).ok());
  }
}

TEST(ValidateSpecTest, FloatZeroPointNeedsSixteenBitActivations) {
  QuantSpec spec = EightBitActivations(DataType::kE4m3);
  spec.weight = Uint(4);
  spec.zero_point = ZeroPointKind::kFloat;
  ExpectInvalid(ValidateSpec(spec), "spec.zero_point",
                "float zero point with non-16-bit activations");
  // An integer zero point is fine with 8-bit activations.
  spec.zero_point = ZeroPointKind::kInteger;
  EXPECT_TRUE(ValidateSpec(spec).ok());
}

TEST(ValidateSpecTest, ActivationTypeIsAnActivationDtype) {
  for (DataType type :
       {DataType::kFp32, DataType::kUe8m0, static_cast<DataType>(99)}) {
    QuantSpec spec;
    spec.activation_type = type;
    ExpectInvalid(ValidateSpec(spec), "spec.activation_type");
  }
}

TEST(ValidateSpecTest, OutputTypeIsSixteenBit) {
  for (DataType type : {DataType::kFp32, DataType::kE4m3, DataType::kInt8}) {
    QuantSpec spec;
    spec.output_type = type;
    ExpectInvalid(ValidateSpec(spec), "spec.output_type");
  }
  QuantSpec spec;
  spec.output_type = DataType::kBf16;
  EXPECT_TRUE(ValidateSpec(spec).ok());
}

TEST(ValidateSpecTest, WeightsNoWiderThanNarrowActivations) {
  QuantSpec spec = EightBitActivations(DataType::kInt4);
  spec.weight = Uint(8);
  ExpectInvalid(ValidateSpec(spec), "spec.weight.bits", "uint8");
  spec.weight = Int(5);
  ExpectInvalid(ValidateSpec(spec), "spec.weight.bits", "int4 activations");
  spec.weight = Uint(4);
  EXPECT_TRUE(ValidateSpec(spec).ok());
  // 8-bit activations take up to 8-bit weights; 16-bit ones anything.
  spec = EightBitActivations(DataType::kInt8);
  spec.weight = Uint(8);
  EXPECT_TRUE(ValidateSpec(spec).ok());
}

TEST(ValidateSpecTest, IntegerActivationsNeedIntegerWeights) {
  QuantSpec spec = EightBitActivations(DataType::kInt8);
  spec.weight = Float(2, 1);
  ExpectInvalid(ValidateSpec(spec), "spec.activation_type", "e2m1");
  spec.weight = Int(4);
  EXPECT_TRUE(ValidateSpec(spec).ok());
}

TEST(ValidateSpecTest, SixteenBitActivationsTakeNoScale) {
  for (ActivationScaleMode mode :
       {ActivationScaleMode::kPerToken, ActivationScaleMode::kPerGroup,
        ActivationScaleMode::kTensor}) {
    QuantSpec spec;
    spec.activation_type = DataType::kBf16;
    spec.activation_scale = mode;
    ExpectInvalid(ValidateSpec(spec), "spec.activation_scale",
                  ActivationScaleModeName(mode));
  }
}

TEST(ValidateSpecTest, NarrowActivationsNeedAScale) {
  for (DataType act :
       {DataType::kE4m3, DataType::kE5m2, DataType::kInt8, DataType::kInt4}) {
    QuantSpec spec;
    spec.weight = Uint(4);
    spec.activation_type = act;
    ExpectInvalid(ValidateSpec(spec), "spec.activation_scale", "none");
    spec.activation_scale = ActivationScaleMode::kTensor;
    EXPECT_TRUE(ValidateSpec(spec).ok()) << DataTypeName(act);
  }
}

TEST(ValidateSpecTest, WideExponentFloatWeightsNeedNonFp16Activations) {
  QuantSpec spec;
  spec.weight = Float(6, 1);
  ExpectInvalid(ValidateSpec(spec), "spec.weight.exponent_bits", "fp16");
  spec.activation_type = DataType::kBf16;
  EXPECT_TRUE(ValidateSpec(spec).ok());
  spec.activation_type = DataType::kFp16;
  spec.weight = Float(5, 2);
  EXPECT_TRUE(ValidateSpec(spec).ok());
}

TEST(ValidateSpecTest, UnknownEnumValuesNameTheirField) {
  QuantSpec spec;
  spec.weight.kind = static_cast<WeightKind>(9);
  ExpectInvalid(ValidateSpec(spec), "spec.weight.kind");
  spec = QuantSpec{};
  spec.granularity = static_cast<ScaleGranularity>(9);
  ExpectInvalid(ValidateSpec(spec), "spec.granularity");
  spec = QuantSpec{};
  spec.zero_point = static_cast<ZeroPointKind>(9);
  ExpectInvalid(ValidateSpec(spec), "spec.zero_point");
  spec = QuantSpec{};
  spec.secondary_scale = static_cast<SecondaryScale>(9);
  ExpectInvalid(ValidateSpec(spec), "spec.secondary_scale");
  spec = QuantSpec{};
  spec.activation_scale = static_cast<ActivationScaleMode>(9);
  ExpectInvalid(ValidateSpec(spec), "spec.activation_scale");
}

// ---- Names ----------------------------------------------------------------

TEST(NamesTest, DataTypeNamesAndBytes) {
  struct Case {
    DataType type;
    const char* name;
    int bytes;
  };
  for (const Case& c :
       {Case{DataType::kFp16, "fp16", 2}, Case{DataType::kBf16, "bf16", 2},
        Case{DataType::kFp32, "fp32", 4}, Case{DataType::kE4m3, "e4m3", 1},
        Case{DataType::kE5m2, "e5m2", 1}, Case{DataType::kUe8m0, "ue8m0", 1},
        Case{DataType::kInt8, "int8", 1}, Case{DataType::kInt4, "int4", 1}}) {
    EXPECT_EQ(DataTypeName(c.type), c.name);
    EXPECT_EQ(DataTypeBytes(c.type), c.bytes) << c.name;
  }
  EXPECT_EQ(DataTypeBytes(static_cast<DataType>(77)), 0);
}

TEST(NamesTest, WeightTypeNames) {
  EXPECT_EQ(WeightTypeName(Uint(4)), "uint4");
  EXPECT_EQ(WeightTypeName(Int(8)), "int8");
  EXPECT_EQ(WeightTypeName(Float(4, 3)), "e4m3");
  EXPECT_EQ(WeightTypeName(Float(2, 1)), "e2m1");
  EXPECT_EQ(WeightTypeName({WeightKind::kFloat, 8, 4, 2}), "float8e4m2");
}

}  // namespace
}  // namespace hummingd
