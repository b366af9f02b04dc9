// The dequant skeleton's per-chunk function, run on the host over every
// chunk of a small matrix, against ReferenceDequantize + RoundToOutputBits:
// bit-exact after output rounding. The configs cover every numeric path of
// the skeleton (fp32 product with the exponent offset folded into the scale
// or applied per element, and the fp64 product), every code width and every
// scale layout.

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gemm/dequant_kernel.cuh"
#include "gtest/gtest.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"
#include "kernels/reference/dequant_reference.h"
#include "kernels/reference/format_reference.h"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd {
namespace {

namespace hd = device;
using CK = hd::CodeKind;
using SL = hd::ScaleLayout;
using ST = hd::ScalarType;
using ZK = hd::ZeroKind;
using SK = hd::SecondaryKind;

// The device enums mirror the host ones value for value; this test relies
// on it to build the host spec from a device config.
static_assert(static_cast<int>(CK::kFloat) ==
              static_cast<int>(WeightKind::kFloat));
static_assert(static_cast<int>(ST::kUe8m0) ==
              static_cast<int>(DataType::kUe8m0));
static_assert(static_cast<int>(SL::kTensor) ==
              static_cast<int>(ScaleGranularity::kTensor));
static_assert(static_cast<int>(ZK::kFloat) ==
              static_cast<int>(ZeroPointKind::kFloat));
static_assert(static_cast<int>(SK::kChannel) ==
              static_cast<int>(SecondaryScale::kChannel));

template <class Config>
QuantSpec SpecOf() {
  QuantSpec spec;
  spec.weight.kind = static_cast<WeightKind>(Config::kKind);
  spec.weight.bits = Config::kBits;
  spec.weight.exponent_bits = Config::kExponentBits;
  spec.weight.mantissa_bits = Config::kMantissaBits;
  spec.granularity = static_cast<ScaleGranularity>(Config::kScaleLayout);
  spec.group_size =
      Config::kScaleLayout == SL::kGroup ? Config::kScaleBlockK : 0;
  spec.block_n = Config::kScaleLayout == SL::kBlock ? Config::kScaleBlockN : 0;
  spec.block_k = Config::kScaleLayout == SL::kBlock ? Config::kScaleBlockK : 0;
  spec.scale_type = static_cast<DataType>(Config::kScaleType);
  spec.zero_point = static_cast<ZeroPointKind>(Config::kZero);
  spec.secondary_scale = static_cast<SecondaryScale>(Config::kSecondary);
  spec.activation_type = static_cast<DataType>(Config::kActivationType);
  spec.output_type = static_cast<DataType>(Config::kOutputType);
  return Canonicalize(spec);
}

// Host copies with the element type the device code reads through, so that
// the typed loads do not alias a byte buffer.
template <class T>
std::vector<T> Retyped(const std::vector<uint8_t>& bytes) {
  std::vector<T> out((bytes.size() + sizeof(T) - 1) / sizeof(T) + 1);
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

struct TypedBytes {
  std::vector<uint8_t> u8;
  std::vector<uint16_t> u16;
  std::vector<uint32_t> u32;
  const void* For(int bytes) const {
    if (bytes == 1) return u8.data();
    if (bytes == 2) return u16.data();
    return u32.data();
  }
  explicit TypedBytes(const std::vector<uint8_t>& raw)
      : u8(raw), u16(Retyped<uint16_t>(raw)), u32(Retyped<uint32_t>(raw)) {}
};

// Runs every chunk of Config on the host and compares with the reference,
// bit for bit after output rounding.
template <class Config>
void CheckInputs(const DequantInputs& inputs) {
  const QuantSpec spec = SpecOf<Config>();
  const LayerShape shape{Config::kN, Config::kK};
  absl::StatusOr<std::vector<float>> reference =
      ReferenceDequantize(spec, shape, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<std::vector<uint16_t>> expected =
      RoundToOutputBits(*reference, spec.output_type);
  ASSERT_TRUE(expected.ok()) << expected.status();

  const TypedBytes scales(inputs.scales);
  const TypedBytes zeros(inputs.zero_points);
  // Poisoned with NaN so that an element the kernel skips cannot pass.
  std::vector<uint32_t> output(shape.n * shape.k / 2, 0x7FFF7FFFu);
  DequantArgs args;
  args.weights = inputs.weights.data();
  args.scales = scales.For(DataTypeBytes(spec.scale_type));
  args.zero_points =
      spec.zero_point == ZeroPointKind::kNone
          ? nullptr
          : zeros.For(spec.zero_point == ZeroPointKind::kInteger ? 1 : 2);
  args.secondary_scale = inputs.secondary_scales.empty()
                             ? nullptr
                             : inputs.secondary_scales.data();
  args.output = output.data();
  for (int64_t chunk = 0; chunk < Config::kChunks; ++chunk) {
    hd::dequant_chunk<Config>(args, chunk);
  }

  std::vector<uint16_t> actual(shape.n * shape.k);
  std::memcpy(actual.data(), output.data(), actual.size() * sizeof(uint16_t));
  int mismatches = 0;
  bool nonzero = false;
  for (size_t i = 0; i < actual.size(); ++i) {
    nonzero |= ((*expected)[i] & 0x7FFFu) != 0;
    if (actual[i] != (*expected)[i] && ++mismatches <= 5) {
      ADD_FAILURE() << "element (" << i / shape.k << ", " << i % shape.k
                    << "): got 0x" << std::hex << actual[i] << ", want 0x"
                    << (*expected)[i] << " (fp32 reference " << (*reference)[i]
                    << ")";
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_TRUE(nonzero);
}

template <class Config>
void CheckConfig(uint64_t seed) {
  const QuantSpec spec = SpecOf<Config>();
  const LayerShape shape{Config::kN, Config::kK};
  SCOPED_TRACE(FormatSpecText(spec) + " N=" + std::to_string(shape.n) +
               " K=" + std::to_string(shape.k));
  ASSERT_TRUE(ValidateSpec(spec).ok()) << ValidateSpec(spec);
  const DequantInputs inputs = MakeRandomDequantInputs(spec, shape, seed);
  ASSERT_FALSE(inputs.weights.empty());
  CheckInputs<Config>(inputs);
}

// clang-format off: one config per line reads as a table.
//                          kind  bits E  M  layout    bn  bk scale     zero
//                          secondary   act       out       N    K
using Uint4Gptq =
    hd::DequantConfig<CK::kUint, 4, 0, 0, SL::kGroup, 1, 128, ST::kFp16,
                      ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, 8, 256>;
using Uint4IntZero =
    hd::DequantConfig<CK::kUint, 4, 0, 0, SL::kGroup, 1, 32, ST::kBf16,
                      ZK::kInteger, SK::kNone, ST::kBf16, ST::kBf16, 6, 128>;
using Uint4FloatZeroFp16 =
    hd::DequantConfig<CK::kUint, 4, 0, 0, SL::kGroup, 1, 64, ST::kFp16,
                      ZK::kFloat, SK::kNone, ST::kFp16, ST::kFp16, 5, 256>;
using Uint4FloatZeroBf16 =
    hd::DequantConfig<CK::kUint, 4, 0, 0, SL::kGroup, 1, 16, ST::kBf16,
                      ZK::kFloat, SK::kChannel, ST::kBf16, ST::kBf16, 4, 128>;
using Uint3Group16 =
    hd::DequantConfig<CK::kUint, 3, 0, 0, SL::kGroup, 1, 16, ST::kFp32,
                      ZK::kNone, SK::kChannel, ST::kFp16, ST::kFp16, 7, 96>;
using Uint1 =
    hd::DequantConfig<CK::kUint, 1, 0, 0, SL::kGroup, 1, 16, ST::kFp16,
                      ZK::kNone, SK::kNone, ST::kFp16, ST::kBf16, 3, 64>;
using Uint2Ternary =
    hd::DequantConfig<CK::kUint, 2, 0, 0, SL::kChannel, 0, 0, ST::kFp16,
                      ZK::kNone, SK::kTensor, ST::kFp16, ST::kFp16, 5, 64>;
using Uint5IntZero =
    hd::DequantConfig<CK::kUint, 5, 0, 0, SL::kGroup, 1, 32, ST::kFp16,
                      ZK::kInteger, SK::kNone, ST::kFp16, ST::kFp16, 4, 160>;
using Uint6Channel =
    hd::DequantConfig<CK::kUint, 6, 0, 0, SL::kChannel, 0, 0, ST::kE4m3,
                      ZK::kNone, SK::kNone, ST::kFp16, ST::kBf16, 9, 64>;
using Uint7Tensor =
    hd::DequantConfig<CK::kUint, 7, 0, 0, SL::kTensor, 0, 0, ST::kBf16,
                      ZK::kNone, SK::kChannel, ST::kBf16, ST::kBf16, 3, 224>;
using Uint8Block =
    hd::DequantConfig<CK::kUint, 8, 0, 0, SL::kBlock, 16, 32, ST::kUe8m0,
                      ZK::kInteger, SK::kNone, ST::kFp16, ST::kFp16, 32, 64>;
using Int2Group =
    hd::DequantConfig<CK::kInt, 2, 0, 0, SL::kGroup, 1, 64, ST::kE5m2,
                      ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, 4, 128>;
using Int4Channel =
    hd::DequantConfig<CK::kInt, 4, 0, 0, SL::kChannel, 0, 0, ST::kBf16,
                      ZK::kNone, SK::kTensor, ST::kBf16, ST::kBf16, 6, 64>;
using Int8Channel =
    hd::DequantConfig<CK::kInt, 8, 0, 0, SL::kChannel, 0, 0, ST::kFp32,
                      ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, 5, 96>;
using E4m3DeepSeek =
    hd::DequantConfig<CK::kFloat, 8, 4, 3, SL::kBlock, 128, 128, ST::kFp32,
                      ZK::kNone, SK::kNone, ST::kBf16, ST::kBf16, 256, 256>;
using E2m1Nvfp4 =
    hd::DequantConfig<CK::kFloat, 4, 2, 1, SL::kGroup, 1, 16, ST::kE4m3,
                      ZK::kNone, SK::kTensor, ST::kFp16, ST::kFp16, 4, 128>;
using E2m1Mxfp4 =
    hd::DequantConfig<CK::kFloat, 4, 2, 1, SL::kGroup, 1, 32, ST::kUe8m0,
                      ZK::kNone, SK::kNone, ST::kBf16, ST::kBf16, 4, 128>;
using E5m2Tensor =
    hd::DequantConfig<CK::kFloat, 8, 5, 2, SL::kTensor, 0, 0, ST::kFp16,
                      ZK::kNone, SK::kChannel, ST::kFp16, ST::kFp16, 4, 128>;
using E3m2Channel =
    hd::DequantConfig<CK::kFloat, 6, 3, 2, SL::kChannel, 0, 0, ST::kBf16,
                      ZK::kNone, SK::kTensor, ST::kFp16, ST::kFp16, 5, 64>;
using E2m3Group =
    hd::DequantConfig<CK::kFloat, 6, 2, 3, SL::kGroup, 1, 32, ST::kFp16,
                      ZK::kNone, SK::kChannel, ST::kFp16, ST::kBf16, 3, 96>;
using E7m0Fold =
    hd::DequantConfig<CK::kFloat, 8, 7, 0, SL::kGroup, 1, 64, ST::kFp16,
                      ZK::kNone, SK::kNone, ST::kBf16, ST::kBf16, 3, 128>;
using E1m6 =
    hd::DequantConfig<CK::kFloat, 8, 1, 6, SL::kGroup, 1, 32, ST::kFp16,
                      ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, 3, 64>;
using E6m1Fp32 =
    hd::DequantConfig<CK::kFloat, 8, 6, 1, SL::kTensor, 0, 0, ST::kFp32,
                      ZK::kNone, SK::kNone, ST::kBf16, ST::kBf16, 3, 64>;

// clang-format on

// Each numeric path of the skeleton is exercised by at least one config.
using hd::DequantChunkPlan;
static_assert(DequantChunkPlan<E5m2Tensor>::kFoldOffsetIntoScale);
static_assert(DequantChunkPlan<E7m0Fold>::kFoldOffsetIntoScale);
static_assert(DequantChunkPlan<E2m1Nvfp4>::kOffsetPerElement);
static_assert(DequantChunkPlan<E4m3DeepSeek>::kOffsetPerElement);
static_assert(DequantChunkPlan<Uint4FloatZeroFp16>::kWideProduct);
static_assert(DequantChunkPlan<Uint3Group16>::kWideProduct);
static_assert(DequantChunkPlan<E3m2Channel>::kWideProduct);
static_assert(!DequantChunkPlan<E2m3Group>::kWideProduct);
static_assert(DequantChunkPlan<Uint3Group16>::kScaleEntries == 2);
static_assert(DequantChunkPlan<Uint4Gptq>::kScaleEntries == 1);

class DequantChunkTest : public ::testing::Test {
 protected:
  const uint64_t seed_ = testing::TestSeed();
};

TEST_F(DequantChunkTest, UintSymmetricAndZeroPoints) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  CheckConfig<Uint4Gptq>(seed_);
  CheckConfig<Uint4IntZero>(seed_);
  CheckConfig<Uint4FloatZeroFp16>(seed_);
  CheckConfig<Uint4FloatZeroBf16>(seed_);
  CheckConfig<Uint5IntZero>(seed_);
  CheckConfig<Uint8Block>(seed_);
}

TEST_F(DequantChunkTest, UintEveryWidthAndLayout) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  CheckConfig<Uint1>(seed_);
  CheckConfig<Uint2Ternary>(seed_);
  CheckConfig<Uint3Group16>(seed_);
  CheckConfig<Uint6Channel>(seed_);
  CheckConfig<Uint7Tensor>(seed_);
}

TEST_F(DequantChunkTest, IntWeights) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  CheckConfig<Int2Group>(seed_);
  CheckConfig<Int4Channel>(seed_);
  CheckConfig<Int8Channel>(seed_);
}

TEST_F(DequantChunkTest, FloatWeights) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  CheckConfig<E4m3DeepSeek>(seed_);
  CheckConfig<E2m1Nvfp4>(seed_);
  CheckConfig<E2m1Mxfp4>(seed_);
  CheckConfig<E5m2Tensor>(seed_);
  CheckConfig<E3m2Channel>(seed_);
  CheckConfig<E2m3Group>(seed_);
  CheckConfig<E7m0Fold>(seed_);
  CheckConfig<E1m6>(seed_);
  CheckConfig<E6m1Fp32>(seed_);
}

// Random inputs almost never hit the cases that need the fp64 product, so
// search for inputs where an fp32 evaluation rounds to a different output
// than the reference, then check the skeleton on exactly those.
void AppendBytes(uint32_t value, int bytes, std::vector<uint8_t>* out) {
  for (int b = 0; b < bytes; ++b) out->push_back((value >> (8 * b)) & 0xFFu);
}

uint32_t Fp32Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// One row of 32 equal uint4 codes.
std::vector<uint32_t> RowOfCode(uint32_t code) {
  return {code * 0x11111111u, code * 0x11111111u, code * 0x11111111u,
          code * 0x11111111u};
}

// clang-format off
using Fp32ScaleSecondary = hd::DequantConfig<CK::kUint, 4, 0, 0, SL::kGroup, 1, 32, ST::kFp32,
    ZK::kNone, SK::kTensor, ST::kFp16, ST::kFp16, 1, 32>;
using FloatZeroFp16 = hd::DequantConfig<CK::kUint, 4, 0, 0, SL::kGroup, 1, 32, ST::kFp16,
    ZK::kFloat, SK::kNone, ST::kFp16, ST::kFp16, 1, 32>;
// clang-format on
static_assert(DequantChunkPlan<Fp32ScaleSecondary>::kWideProduct);
static_assert(DequantChunkPlan<FloatZeroFp16>::kWideProduct);

TEST_F(DequantChunkTest, WideProductWhereFp32WouldRoundDifferently) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  std::mt19937_64 rng(seed_);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto fp16 = [](double v) {
    return ReferenceEncodeFloat(static_cast<float>(v), DataType::kFp16);
  };

  // fp32 scale * fp32 secondary: (v*s) has up to 28 significant bits.
  bool found = false;
  for (int attempt = 0; attempt < 1 << 22 && !found; ++attempt) {
    const uint32_t code = static_cast<uint32_t>(rng() % 16);
    const float value = static_cast<float>(code) - 8.0f;
    const float scale = static_cast<float>(std::ldexp(1 + unit(rng), -4));
    const float secondary = static_cast<float>(0.5 + 1.5 * unit(rng));
    const float fp32_path = (value * scale) * secondary;
    const float reference =
        static_cast<float>(static_cast<double>(value) * scale * secondary);
    if (fp16(fp32_path) == fp16(reference)) continue;
    found = true;
    DequantInputs inputs;
    inputs.weights = RowOfCode(code);
    AppendBytes(Fp32Bits(scale), 4, &inputs.scales);
    inputs.secondary_scales = {secondary};
    CheckInputs<Fp32ScaleSecondary>(inputs);
  }
  EXPECT_TRUE(found) << "no fp32-sensitive scale/secondary pair found";

  // Float zero point: with a subnormal z, q - z rounds back to q in fp32,
  // while the exact difference lies just below an output rounding tie.
  found = false;
  for (int attempt = 0; attempt < 1 << 22 && !found; ++attempt) {
    const uint32_t code = 8 + static_cast<uint32_t>(rng() % 8);
    const uint32_t zero_bits = 1 + static_cast<uint32_t>(rng() % 7);
    const uint32_t scale_bits = fp16(std::ldexp(1 + unit(rng), -4));
    const float zero = ReferenceDecodeScale(DataType::kFp16, zero_bits);
    const float scale = ReferenceDecodeScale(DataType::kFp16, scale_bits);
    const float fp32_path = (static_cast<float>(code) - zero) * scale;
    const float reference =
        static_cast<float>((static_cast<double>(code) - zero) * scale);
    if (fp16(fp32_path) == fp16(reference)) continue;
    found = true;
    DequantInputs inputs;
    inputs.weights = RowOfCode(code);
    AppendBytes(scale_bits, 2, &inputs.scales);
    AppendBytes(zero_bits, 2, &inputs.zero_points);
    CheckInputs<FloatZeroFp16>(inputs);
  }
  EXPECT_TRUE(found) << "no fp32-sensitive zero point/scale pair found";
}

}  // namespace
}  // namespace hummingd
