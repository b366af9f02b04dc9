// The device quantize kernel's building blocks (pack/quantize.cuh) run on
// the CPU, job by job and lane by lane as the warps would (the warp's
// min/max reduction is exact, so folding every lane into one accumulator is
// the same), and must produce the bytes of ReferenceQuantize.

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/plan.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"
#include "kernels/reference/dequant_reference.h"
#include "kernels/reference/format_reference.h"
#include "kernels/reference/quantize_reference.h"
#include "pack/quantize.cuh"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd {
namespace {

namespace hd = ::hummingd::device;
using hd::CodeKind;
using hd::ScalarType;
using hd::ScaleLayout;
using hd::SecondaryKind;
using hd::ZeroKind;

template <class Config>
void ExpectHostKernelMatchesReference(const char* text, uint64_t seed) {
  SCOPED_TRACE(text);
  using Plan = hd::QuantizePlan<Config>;
  absl::StatusOr<QuantSpec> parsed = ParseSpecText(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  KernelRequest request;
  request.spec = Canonicalize(*parsed);
  request.shape.n = Config::kN;
  request.shape.k = Config::kK;
  ASSERT_TRUE(CheckQuantizeRequest(request).ok());
  ASSERT_EQ(QuantizeJobs(request), Plan::kJobs);
  absl::StatusOr<DequantLayout> layout =
      DequantBufferLayout(request.spec, request.shape);
  ASSERT_TRUE(layout.ok()) << layout.status();

  // Input in the activation dtype; the reference sees the same values.
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const int64_t count = Config::kN * Config::kK;
  std::vector<uint16_t> input(count);
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    const float v = unit(rng) * std::ldexp(1.0f, static_cast<int>(i % 5) - 2);
    input[i] = static_cast<uint16_t>(
        ReferenceEncodeFloat(v, request.spec.activation_type));
    values[i] = ReferenceDecodeScale(request.spec.activation_type, input[i]);
  }
  absl::StatusOr<DequantInputs> expected =
      ReferenceQuantize(request.spec, request.shape, values);
  ASSERT_TRUE(expected.ok()) << expected.status();

  // Poisoned outputs: every byte must be written.
  std::vector<uint32_t> weights(layout->weight_words, 0xA5A5A5A5u);
  std::vector<uint8_t> scales(layout->scale_bytes, 0xA5);
  std::vector<uint8_t> zeros(layout->zero_point_bytes, 0xA5);
  std::vector<float> secondary(layout->secondary_entries, -7.0f);
  QuantizeArgs args;
  args.input = input.data();
  args.weights = weights.data();
  args.scales = scales.data();
  args.zero_points = zeros.empty() ? nullptr : zeros.data();
  args.secondary_scale = secondary.empty() ? nullptr : secondary.data();
  for (int64_t job = 0; job < Plan::kJobs; ++job) {
    float lo[Plan::kEntries];
    float hi[Plan::kEntries];
    for (int e = 0; e < Plan::kEntries; ++e) lo[e] = hi[e] = 0.0f;
    for (int lane = 0; lane < 32; ++lane) {
      hd::quantize_job_range<Config>(args, job, lane, 32, lo, hi);
    }
    hd::QuantizeEntry entries[Plan::kEntries];
    hd::make_job_entries<Config>(lo, hi, entries);
    hd::quantize_job_write_entries<Config>(args, job, entries);
    for (int lane = 0; lane < 32; ++lane) {
      hd::quantize_job_chunks<Config>(args, job, lane, 32, entries);
    }
  }
  EXPECT_EQ(weights, expected->weights);
  EXPECT_EQ(scales, expected->scales);
  EXPECT_EQ(zeros, expected->zero_points);
  EXPECT_EQ(secondary, expected->secondary_scales);
  bool any_nonzero = false;
  for (uint32_t word : weights) any_nonzero |= word != 0;
  EXPECT_TRUE(any_nonzero);
}

template <CodeKind kKind, int kBits, int kE, int kM, ScaleLayout kLayout,
          int kBlockN, int kBlockK, ScalarType kScale, ZeroKind kZero,
          SecondaryKind kSecondary, ScalarType kAct, long long kN, long long kK>
using Cfg =
    hd::DequantConfig<kKind, kBits, kE, kM, kLayout, kBlockN, kBlockK, kScale,
                      kZero, kSecondary, kAct, ScalarType::kFp16, kN, kK>;

TEST(QuantizeKernelHostTest, UintFormatsMatchReference) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kUint, 4, 0, 0, ScaleLayout::kGroup, 1, 128, ScalarType::kFp16,
      ZeroKind::kNone, SecondaryKind::kNone, ScalarType::kFp16, 16, 256>>(
      "weight=uint4,group=128,scale=fp16", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kUint, 1, 0, 0, ScaleLayout::kGroup, 1, 16, ScalarType::kFp16,
      ZeroKind::kNone, SecondaryKind::kNone, ScalarType::kFp16, 8, 64>>(
      "weight=uint1,group=16,scale=fp16", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kUint, 3, 0, 0, ScaleLayout::kGroup, 1, 64, ScalarType::kFp16,
      ZeroKind::kNone, SecondaryKind::kNone, ScalarType::kBf16, 8, 128>>(
      "weight=uint3,group=64,scale=fp16,act=bf16", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kUint, 5, 0, 0, ScaleLayout::kGroup, 1, 16, ScalarType::kBf16,
      ZeroKind::kNone, SecondaryKind::kNone, ScalarType::kBf16, 8, 64>>(
      "weight=uint5,group=16,scale=bf16,act=bf16", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kUint, 8, 0, 0, ScaleLayout::kGroup, 1, 32, ScalarType::kE4m3,
      ZeroKind::kNone, SecondaryKind::kNone, ScalarType::kFp16, 8, 128>>(
      "weight=uint8,group=32,scale=e4m3", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kUint, 4, 0, 0, ScaleLayout::kBlock, 32, 16, ScalarType::kUe8m0,
      ZeroKind::kNone, SecondaryKind::kNone, ScalarType::kFp16, 32, 64>>(
      "weight=uint4,group=16x32,scale=ue8m0", seed);
}

TEST(QuantizeKernelHostTest, ZeroPointFormatsMatchReference) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kUint, 3, 0, 0, ScaleLayout::kGroup, 1, 16, ScalarType::kFp16,
      ZeroKind::kInteger, SecondaryKind::kNone, ScalarType::kFp16, 8, 64>>(
      "weight=uint3,group=16,scale=fp16,zero=int", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kUint, 8, 0, 0, ScaleLayout::kChannel, 0, 0, ScalarType::kFp32,
      ZeroKind::kInteger, SecondaryKind::kNone, ScalarType::kFp16, 8, 64>>(
      "weight=uint8,group=channel,scale=fp32,zero=int", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kUint, 4, 0, 0, ScaleLayout::kGroup, 1, 64, ScalarType::kFp16,
      ZeroKind::kFloat, SecondaryKind::kNone, ScalarType::kFp16, 8, 128>>(
      "weight=uint4,group=64,scale=fp16,zero=float", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kUint, 2, 0, 0, ScaleLayout::kGroup, 1, 32, ScalarType::kBf16,
      ZeroKind::kFloat, SecondaryKind::kNone, ScalarType::kBf16, 8, 64>>(
      "weight=uint2,group=32,scale=bf16,zero=float,act=bf16", seed);
}

TEST(QuantizeKernelHostTest, IntAndFloatFormatsMatchReference) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kInt, 4, 0, 0, ScaleLayout::kGroup, 1, 128, ScalarType::kFp16,
      ZeroKind::kNone, SecondaryKind::kChannel, ScalarType::kFp16, 16, 256>>(
      "weight=int4,group=128,scale=fp16,scale2=channel", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kInt, 5, 0, 0, ScaleLayout::kBlock, 16, 16, ScalarType::kE5m2,
      ZeroKind::kNone, SecondaryKind::kNone, ScalarType::kFp16, 32, 64>>(
      "weight=int5,group=16x16,scale=e5m2", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kFloat, 8, 4, 3, ScaleLayout::kChannel, 0, 0, ScalarType::kFp32,
      ZeroKind::kNone, SecondaryKind::kNone, ScalarType::kBf16, 8, 64>>(
      "weight=e4m3,group=channel,scale=fp32,act=bf16", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kFloat, 4, 2, 1, ScaleLayout::kGroup, 1, 16, ScalarType::kE4m3,
      ZeroKind::kNone, SecondaryKind::kTensor, ScalarType::kFp16, 8, 64>>(
      "weight=e2m1,group=16,scale=e4m3,scale2=tensor", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kFloat, 8, 5, 2, ScaleLayout::kTensor, 0, 0, ScalarType::kFp16,
      ZeroKind::kNone, SecondaryKind::kNone, ScalarType::kFp16, 8, 64>>(
      "weight=e5m2,group=tensor,scale=fp16", seed);
  ExpectHostKernelMatchesReference<Cfg<
      CodeKind::kFloat, 8, 3, 4, ScaleLayout::kGroup, 1, 32, ScalarType::kUe8m0,
      ZeroKind::kNone, SecondaryKind::kNone, ScalarType::kFp16, 8, 64>>(
      "weight=e3m4,group=32,scale=ue8m0", seed);
}

}  // namespace
}  // namespace hummingd
