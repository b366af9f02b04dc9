// The host half of hummingd_gemm_bench's verdicts: the target rule on
// hand-computed cases, the sampled weight rows against the full reference
// dequant, the error metric on known perturbations, NaN detection, an
// end-to-end check of a host-computed output (right, missing its bias,
// poisoned), and the report's JSON.

#include "bench/kernel/gemm_bench_check.h"

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "bench/kernel/decode_cases.h"
#include "bench/kernel/gemm_bench_report.h"
#include "gtest/gtest.h"
#include "kernels/reference/dequant_reference.h"
#include "kernels/reference/format_reference.h"

namespace hummingd::bench {
namespace {

// KERNELS.md's W4A16 8192² row: roofline 8.3 µs at M = 1 → ≤ 10.4.
TEST(TargetUsTest, LargeLayersAtSmallMGetARatioOfTheRoofline) {
  EXPECT_DOUBLE_EQ(*TargetUs(4, 8192, 8192, 1, 8.3), 8.3 / 0.8);
  EXPECT_DOUBLE_EQ(*TargetUs(4, 8192, 28672, 64, 10.0), 12.5);
  EXPECT_DOUBLE_EQ(*TargetUs(8, 28672, 8192, 16, 30.0), 40.0);
  // N·K exactly 8192² is large, whichever way it is split.
  EXPECT_DOUBLE_EQ(*TargetUs(4, 16384, 4096, 2, 8.0), 10.0);
  // Widths other than 4 and 8 bits have no ratio set.
  EXPECT_FALSE(TargetUs(3, 8192, 8192, 1, 8.0).has_value());
}

TEST(TargetUsTest, SmallLayersAtSmallMGetAnAbsoluteMargin) {
  EXPECT_DOUBLE_EQ(*TargetUs(4, 4096, 4096, 1, 2.0), 4.5);
  EXPECT_DOUBLE_EQ(*TargetUs(8, 4096, 14336, 32, 7.0), 9.5);
  EXPECT_DOUBLE_EQ(*TargetUs(3, 6144, 4096, 64, 3.0), 5.5);
  // One K step below 8192²: small.
  EXPECT_DOUBLE_EQ(*TargetUs(4, 8192, 8160, 1, 8.0), 10.5);
}

TEST(TargetUsTest, LargeMGetNinetyPercentAndTheMiddleNone) {
  EXPECT_NEAR(*TargetUs(4, 8192, 8192, 1024, 171.8), 190.89, 0.01);
  EXPECT_DOUBLE_EQ(*TargetUs(4, 4096, 4096, 4096, 90.0), 100.0);
  EXPECT_DOUBLE_EQ(*TargetUs(3, 8192, 8192, 8192, 900.0), 1000.0);
  EXPECT_FALSE(TargetUs(4, 8192, 8192, 65, 11.0).has_value());
  EXPECT_FALSE(TargetUs(4, 8192, 8192, 256, 42.9).has_value());
  EXPECT_FALSE(TargetUs(4, 4096, 4096, 1023, 60.0).has_value());
}

TEST(SpreadIndicesTest, KeepsTheEndsAndStaysDistinct) {
  EXPECT_EQ(SpreadIndices(10, 64),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(SpreadIndices(1, 64), (std::vector<int64_t>{0}));
  EXPECT_EQ(SpreadIndices(100, 3), (std::vector<int64_t>{0, 50, 99}));
  const std::vector<int64_t> wide = SpreadIndices(28672, 64);
  ASSERT_EQ(wide.size(), 64u);
  EXPECT_EQ(wide.front(), 0);
  EXPECT_EQ(wide.back(), 28671);
  for (size_t i = 1; i < wide.size(); ++i) EXPECT_GT(wide[i], wide[i - 1]);
  const std::vector<int64_t> tight = SpreadIndices(65, 64);
  EXPECT_EQ(std::set<int64_t>(tight.begin(), tight.end()).size(), 64u);
  EXPECT_EQ(tight.back(), 64);
}

TEST(SampleRowsTest, EveryRowUpTo256ThenSixtyFour) {
  EXPECT_EQ(SampleRows(1), (std::vector<int64_t>{0}));
  EXPECT_EQ(SampleRows(256).size(), 256u);
  const std::vector<int64_t> rows = SampleRows(8192);
  ASSERT_EQ(rows.size(), 64u);
  EXPECT_EQ(rows.front(), 0);
  EXPECT_EQ(rows.back(), 8191);
}

TEST(RandomUnitBitsTest, DeterministicSpreadOverMinusOneToOne) {
  for (const DataType type : {DataType::kFp16, DataType::kBf16}) {
    // More than one generator chunk (2^16), so chunk seeding is exercised.
    const int64_t count = 200000;
    const std::vector<uint16_t> bits = RandomUnitBits(type, count, 7);
    ASSERT_EQ(static_cast<int64_t>(bits.size()), count);
    EXPECT_EQ(bits, RandomUnitBits(type, count, 7));
    EXPECT_NE(bits, RandomUnitBits(type, count, 8));
    // A prefix draws the same values: each chunk has its own generator.
    const std::vector<uint16_t> prefix = RandomUnitBits(type, 70000, 7);
    EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), bits.begin()));
    double sum = 0;
    int64_t negative = 0;
    std::set<uint16_t> distinct;
    for (const uint16_t b : bits) {
      const double value = ReferenceDecodeScale(type, b);
      ASSERT_TRUE(std::isfinite(value));
      ASSERT_LE(std::fabs(value), 1.0);
      sum += value;
      negative += value < 0;
      distinct.insert(b);
    }
    EXPECT_NEAR(sum / count, 0.0, 0.01);
    EXPECT_NEAR(static_cast<double>(negative) / count, 0.5, 0.01);
    EXPECT_GT(distinct.size(), 1000u);
  }
}

TEST(NumericsBoundTest, Bf16AnywhereGetsTheWiderBound) {
  QuantSpec spec;
  EXPECT_DOUBLE_EQ(NumericsBound(spec), 1e-3);
  spec.output_type = DataType::kBf16;
  EXPECT_DOUBLE_EQ(NumericsBound(spec), 8e-3);
  spec.output_type = DataType::kFp16;
  spec.activation_type = DataType::kBf16;
  EXPECT_DOUBLE_EQ(NumericsBound(spec), 8e-3);
}

QuantSpec Parse(const std::string& text) {
  absl::StatusOr<QuantSpec> spec = ParseSpecText(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  EXPECT_TRUE(ValidateSpec(*spec).ok()) << text;
  return *spec;
}

class DequantizeWeightRowsTest : public ::testing::TestWithParam<const char*> {
};

TEST_P(DequantizeWeightRowsTest, MatchesTheFullReferenceBitForBit) {
  const QuantSpec spec = Parse(GetParam());
  LayerShape shape;
  shape.n = 256;
  shape.k = 256;
  const DequantInputs inputs = MakeRandomDequantInputs(spec, shape, 99);
  absl::StatusOr<std::vector<float>> full =
      ReferenceDequantize(spec, shape, inputs);
  ASSERT_TRUE(full.ok()) << full.status();
  const std::vector<int64_t> rows = {0, 1, 127, 128, 200, 255};
  absl::StatusOr<std::vector<float>> sampled =
      DequantizeWeightRows(spec, shape, inputs, rows);
  ASSERT_TRUE(sampled.ok()) << sampled.status();
  ASSERT_EQ(sampled->size(), rows.size() * shape.k);
  int64_t nonzero = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int64_t c = 0; c < shape.k; ++c) {
      const float want = (*full)[rows[i] * shape.k + c];
      ASSERT_EQ((*sampled)[i * shape.k + c], want)
          << "row " << rows[i] << " col " << c;
      nonzero += want != 0;
    }
  }
  EXPECT_GT(nonzero, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Granularities, DequantizeWeightRowsTest,
    ::testing::Values("weight=uint4,group=32,scale=fp16",
                      "weight=uint4,group=64,scale=bf16,zero=int,act=bf16",
                      "weight=uint3,group=channel,scale=fp32,zero=float",
                      "weight=e2m1,group=32,scale=ue8m0,scale2=tensor",
                      "weight=int8,group=tensor,scale=fp32,scale2=channel",
                      "weight=e4m3,group=128x128,scale=fp32"));

TEST(DequantizeWeightRowsTest, RefusesBadRowsAndBuffers) {
  const QuantSpec spec = Parse("weight=uint4,group=32,scale=fp16");
  LayerShape shape;
  shape.n = 64;
  shape.k = 64;
  DequantInputs inputs = MakeRandomDequantInputs(spec, shape, 3);
  const std::vector<int64_t> outside = {64};
  EXPECT_FALSE(DequantizeWeightRows(spec, shape, inputs, outside).ok());
  const std::vector<int64_t> negative = {-1};
  EXPECT_FALSE(DequantizeWeightRows(spec, shape, inputs, negative).ok());
  inputs.scales.pop_back();
  const std::vector<int64_t> first = {0};
  EXPECT_FALSE(DequantizeWeightRows(spec, shape, inputs, first).ok());
}

TEST(CompareToReferenceTest, RelativeErrorOfAKnownPerturbation) {
  // ‖(0, 0.01)‖ / ‖(3, 4)‖ = 0.01 / 5.
  const std::vector<double> ref = {3.0, 4.0};
  const std::vector<double> got = {3.0, 4.01};
  NumericsResult result = CompareToReference(got, ref, 1e-3);
  EXPECT_NEAR(result.relative_error, 2e-3, 1e-12);
  EXPECT_EQ(result.checked, 2);
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(CompareToReference(got, ref, 8e-3).ok);

  // A uniform scaling by (1 + e) has relative error e.
  std::vector<double> long_ref, scaled;
  for (int i = 1; i <= 1000; ++i) {
    long_ref.push_back(std::sin(i) * i);
    scaled.push_back(long_ref.back() * (1 + 5e-4));
  }
  result = CompareToReference(scaled, long_ref, 1e-3);
  EXPECT_NEAR(result.relative_error, 5e-4, 1e-12);
  EXPECT_TRUE(result.ok);
}

TEST(CompareToReferenceTest, AnyNaNOrInfFails) {
  const std::vector<double> ref = {1.0, 2.0, 3.0};
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity()}) {
    const std::vector<double> got = {1.0, bad, 3.0};
    const NumericsResult result = CompareToReference(got, ref, 1e-3);
    EXPECT_EQ(result.non_finite, 1);
    EXPECT_FALSE(result.ok);
    // The finite rest is exact: the verdict comes from the NaN alone.
    EXPECT_EQ(result.relative_error, 0.0);
  }
}

// A layer whose "GPU output" is computed here: the fp64 product of the whole
// dequantized matrix, rounded to the output type.
struct HostLayer {
  QuantSpec spec;
  LayerShape shape;
  DequantInputs inputs;
  std::vector<uint16_t> x_bits, bias_bits;

  HostLayer(const std::string& text, int64_t n, int64_t k, int64_t m) {
    spec = Parse(text);
    shape.n = n;
    shape.k = k;
    inputs = MakeRandomDequantInputs(spec, shape, 5);
    x_bits = RandomUnitBits(spec.activation_type, m * k, 6);
    if (spec.has_bias) bias_bits = RandomUnitBits(spec.output_type, n, 7);
  }

  // Rows `rows` of Y, whole, as output-type bits.
  std::vector<uint16_t> Output(const std::vector<int64_t>& rows,
                               bool with_bias) const {
    const std::vector<float> w = *ReferenceDequantize(spec, shape, inputs);
    std::vector<uint16_t> y;
    for (const int64_t r : rows) {
      for (int64_t j = 0; j < shape.n; ++j) {
        double sum = 0;
        for (int64_t c = 0; c < shape.k; ++c) {
          sum += static_cast<double>(ReferenceDecodeScale(
                     spec.activation_type, x_bits[r * shape.k + c])) *
                 w[j * shape.k + c];
        }
        if (with_bias && spec.has_bias) {
          sum += ReferenceDecodeScale(spec.output_type, bias_bits[j]);
        }
        y.push_back(static_cast<uint16_t>(
            ReferenceEncodeFloat(static_cast<float>(sum), spec.output_type)));
      }
    }
    return y;
  }
};

TEST(CheckOutputRowsTest, RightOutputPassesMissingBiasAndNaNFail) {
  const int64_t m = 7;
  const HostLayer layer("weight=uint4,group=32,scale=fp16,bias=1", 96, 128, m);
  absl::StatusOr<NumericsReference> reference = MakeNumericsReference(
      layer.spec, layer.shape, layer.inputs, layer.bias_bits);
  ASSERT_TRUE(reference.ok()) << reference.status();
  EXPECT_EQ(reference->columns.size(), 64u);
  EXPECT_EQ(reference->column_bias.size(), 64u);
  const std::vector<int64_t> rows = SampleRows(m);

  std::vector<uint16_t> y = layer.Output(rows, /*with_bias=*/true);
  NumericsResult result = CheckOutputRows(*reference, layer.x_bits, rows, y);
  EXPECT_TRUE(result.ok) << result.relative_error;
  EXPECT_EQ(result.checked, m * 64);
  // Rounding to fp16 alone leaves an error, but well inside the bound.
  EXPECT_GT(result.relative_error, 0.0);
  EXPECT_LT(result.relative_error, 1e-3);

  const std::vector<uint16_t> no_bias = layer.Output(rows, false);
  result = CheckOutputRows(*reference, layer.x_bits, rows, no_bias);
  EXPECT_FALSE(result.ok);
  EXPECT_GT(result.relative_error, 1e-2);

  // The poison value left in the last element (last row, last column, both
  // always sampled), as if the kernel never wrote it.
  y.back() = 0xFFFF;
  result = CheckOutputRows(*reference, layer.x_bits, rows, y);
  EXPECT_EQ(result.non_finite, 1);
  EXPECT_FALSE(result.ok);
}

TEST(CheckOutputRowsTest, Bf16WithSampledRows) {
  const int64_t m = 300;  // above kAllRowsUpToM: 64 rows are read
  const HostLayer layer("weight=uint8,group=64,scale=bf16,act=bf16,out=bf16",
                        64, 256, m);
  absl::StatusOr<NumericsReference> reference =
      MakeNumericsReference(layer.spec, layer.shape, layer.inputs, {});
  ASSERT_TRUE(reference.ok()) << reference.status();
  EXPECT_DOUBLE_EQ(reference->bound, 8e-3);
  const std::vector<int64_t> rows = SampleRows(m);
  ASSERT_EQ(rows.size(), 64u);
  const std::vector<uint16_t> y = layer.Output(rows, true);
  const NumericsResult result =
      CheckOutputRows(*reference, layer.x_bits, rows, y);
  EXPECT_TRUE(result.ok) << result.relative_error;
  EXPECT_GT(result.relative_error, 0.0);
  EXPECT_EQ(result.checked, 64 * 64);
}

TEST(MakeNumericsReferenceTest, BiasMustMatchTheSpec) {
  const QuantSpec spec = Parse("weight=uint4,group=32,scale=fp16,bias=1");
  LayerShape shape;
  shape.n = 64;
  shape.k = 64;
  const DequantInputs inputs = MakeRandomDequantInputs(spec, shape, 1);
  EXPECT_FALSE(MakeNumericsReference(spec, shape, inputs, {}).ok());
}

TEST(ReportTest, JsonTableAndSummary) {
  GemmBenchRow met;
  met.spec = "weight=uint4,group=128";
  met.n = 8192;
  met.k = 8192;
  met.m = 1;
  met.us = 10.0;
  met.roofline_us = 8.3;
  met.cublas_us = 37.2;
  met.target_us = TargetUs(4, 8192, 8192, 1, 8.3);
  met.numerics = CompareToReference(std::vector<double>{3.0, 4.0},
                                    std::vector<double>{3.0, 4.0}, 1e-3);
  met.kernel = "tile=8x256x128,warps=1x8,stages=5,mma=wgmma";
  met.splits = 8;
  met.gpu = "NVIDIA H200";
  met.copy_tbps = 4.18;
  met.tensor_tflops = 800;
  GemmBenchRow failed = met;
  failed.gpu.clear();
  failed.kernel.clear();
  failed.splits = 1;
  failed.m = 256;
  failed.us = 60.0;
  failed.roofline_us = 42.9;
  failed.cublas_us = 0;
  failed.target_us = std::nullopt;
  failed.numerics = CompareToReference(std::vector<double>{3.0, std::nan("")},
                                       std::vector<double>{3.0, 4.0}, 1e-3);
  const std::vector<GemmBenchRow> rows = {met, failed};

  EXPECT_EQ(MeetsTarget(met), true);
  EXPECT_EQ(MeetsTarget(failed), std::nullopt);
  const std::string json = FormatJson(rows);
  const std::vector<std::string> lines = absl::StrSplit(json, '\n');
  ASSERT_EQ(lines.size(), 5u);  // "[", two rows, "]", ""
  EXPECT_NE(lines[1].find("\"target_us\": 10.375"), std::string::npos);
  EXPECT_NE(lines[1].find("\"meets\": true"), std::string::npos);
  EXPECT_NE(lines[1].find("\"cublas_us\": 37.200"), std::string::npos);
  EXPECT_NE(lines[1].find("\"numerics_ok\": true"), std::string::npos);
  // The GPU and its ceilings, between the verdicts and the kernel (readers
  // match the kernel and split count at the end of the line).
  EXPECT_NE(lines[1].find("\"gpu\": \"NVIDIA H200\", \"copy_tbps\": 4.180, "
                          "\"tensor_tflops\": 800.0, \"kernel\""),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find("\"gpu\": null"), std::string::npos) << lines[2];
  EXPECT_NE(lines[1].find("\"kernel\": "
                          "\"tile=8x256x128,warps=1x8,stages=5,mma=wgmma\", "
                          "\"splits\": 8}"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find("\"kernel\": null, \"splits\": 1}"),
            std::string::npos)
      << lines[2];
  EXPECT_NE(lines[2].find("\"target_us\": null"), std::string::npos);
  EXPECT_NE(lines[2].find("\"meets\": null"), std::string::npos);
  EXPECT_NE(lines[2].find("\"cublas_us\": null"), std::string::npos);
  EXPECT_NE(lines[2].find("\"non_finite\": 1"), std::string::npos);
  EXPECT_NE(lines[2].find("\"numerics_ok\": false"), std::string::npos);
  EXPECT_EQ(json.find("nan"), std::string::npos);

  const std::string table = FormatMarkdownTable(rows);
  EXPECT_NE(table.find("| 10.4 | yes |"), std::string::npos) << table;
  EXPECT_NE(table.find("**FAIL**"), std::string::npos) << table;
  EXPECT_EQ(FormatSummary(rows),
            "2 cases, 1 numerics failures, 1/1 targets met");
}

// The bench and hummingd_planned_cubins read --shapes with one parser; the
// default list is issue 5's six layers.
TEST(ParseShapeListTest, ReadsTheDefaultLayersAndRefusesMalformedItems) {
  absl::StatusOr<std::vector<LayerShape>> shapes =
      ParseShapeList(DecodeLayersText());
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  ASSERT_EQ(shapes->size(), 6u);
  EXPECT_EQ((*shapes)[1].n, 28672);
  EXPECT_EQ((*shapes)[1].k, 8192);
  EXPECT_EQ((*shapes)[5].n, 4096);
  EXPECT_EQ((*shapes)[5].k, 14336);
  const std::vector<std::string> specs = absl::StrSplit(DecodeSpecsText(), ';');
  ASSERT_EQ(specs.size(), std::size(kDecodeSpecs));
  EXPECT_EQ(specs[1], "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16");
  for (const char* bad : {"", "8192", "8192x", "x8192", "8192x8192x2", "0x8192",
                          "-64x128", "64x128,", "64xabc"}) {
    SCOPED_TRACE(bad);
    absl::StatusOr<std::vector<LayerShape>> refused = ParseShapeList(bad);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace hummingd::bench
