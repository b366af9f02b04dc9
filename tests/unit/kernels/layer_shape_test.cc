#include "kernels/layer_shape.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace hummingd {
namespace {

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

LayerShape Dense(int64_t n, int64_t k) {
  return {n, k, GemmKind::kDense, 0, 0};
}

absl::Status Check(const QuantSpec& spec, const LayerShape& shape,
                   KernelFamily family = KernelFamily::kGemm,
                   ShapeLimits limits = {}) {
  return ValidateShape(spec, shape, family, limits);
}

TEST(ValidateShapeTest, AcceptsOrdinaryLayers) {
  const QuantSpec spec;  // group 128
  EXPECT_TRUE(Check(spec, Dense(4096, 4096)).ok());
  EXPECT_TRUE(Check(spec, Dense(1, 128), KernelFamily::kDequant).ok());
  EXPECT_TRUE(Check(spec, {8192, 4096, GemmKind::kMoeIndexed, 64, 8}).ok());
}

TEST(ValidateShapeTest, DimensionsPositive) {
  const QuantSpec spec;
  ExpectInvalid(Check(spec, Dense(0, 128)), "shape.n", "(got 0)");
  ExpectInvalid(Check(spec, Dense(-5, 128)), "shape.n");
  ExpectInvalid(Check(spec, Dense(128, 0)), "shape.k");
  ExpectInvalid(Check(spec, Dense(128, -128)), "shape.k");
}

TEST(ValidateShapeTest, DimensionsAtMostTwoToTheTwenty) {
  QuantSpec spec;
  spec.granularity = ScaleGranularity::kChannel;
  const int64_t max = int64_t{1} << 20;
  EXPECT_TRUE(Check(spec, Dense(max, 32)).ok());
  EXPECT_TRUE(Check(spec, Dense(32, max)).ok());
  ExpectInvalid(Check(spec, Dense(max + 1, 32)), "shape.n");
  ExpectInvalid(Check(spec, Dense(32, max + 32)), "shape.k");
  // Overflow-safe: huge values are refused, not multiplied.
  const int64_t huge = std::numeric_limits<int64_t>::max();
  ExpectInvalid(Check(spec, Dense(huge, huge)), "shape.n");
  ExpectInvalid(Check(spec, Dense(32, huge)), "shape.k");
}

TEST(ValidateShapeTest, KMultipleOf32) {
  QuantSpec spec;
  spec.granularity = ScaleGranularity::kChannel;
  ExpectInvalid(Check(spec, Dense(64, 48)), "shape.k", "32");
  EXPECT_TRUE(Check(spec, Dense(7, 96)).ok());  // N needs no alignment
}

TEST(ValidateShapeTest, KMultipleOfGroupSize) {
  QuantSpec spec;
  spec.group_size = 128;
  ExpectInvalid(Check(spec, Dense(128, 4160)), "shape.k",
                "spec.group_size=128 (got 4160)");
  EXPECT_TRUE(Check(spec, Dense(128, 4096)).ok());
}

TEST(ValidateShapeTest, BlockDividesKAndN) {
  QuantSpec spec;
  spec.granularity = ScaleGranularity::kBlock;
  spec.block_k = 128;
  spec.block_n = 64;
  EXPECT_TRUE(Check(spec, Dense(192, 256)).ok());
  ExpectInvalid(Check(spec, Dense(192, 160)), "shape.k", "spec.block_k=128");
  ExpectInvalid(Check(spec, Dense(96, 256)), "shape.n", "spec.block_n=64");
}

TEST(ValidateShapeTest, UnvalidatedSpecDoesNotDivideByZero) {
  QuantSpec spec;
  spec.group_size = 0;
  ExpectInvalid(Check(spec, Dense(32, 32)), "spec.group_size");
}

TEST(ValidateShapeTest, ElementCap) {
  const QuantSpec spec;
  ShapeLimits limits;
  limits.max_weight_elements = 128 * 256;
  EXPECT_TRUE(Check(spec, Dense(128, 256), KernelFamily::kGemm, limits).ok());
  const absl::Status status =
      Check(spec, Dense(129, 256), KernelFamily::kGemm, limits);
  ExpectInvalid(status, "shape", "N*K = 33024");
  EXPECT_NE(status.message().find("exceeds the configured cap"),
            std::string::npos);
  // The default cap (2^34) refuses 2^20 x 2^20.
  ExpectInvalid(Check(spec, Dense(int64_t{1} << 20, int64_t{1} << 20)), "shape",
                "exceeds the configured cap");
}

TEST(ValidateShapeTest, DenseHasNoExperts) {
  const QuantSpec spec;
  ExpectInvalid(Check(spec, {128, 128, GemmKind::kDense, 8, 0}),
                "shape.experts");
  ExpectInvalid(Check(spec, {128, 128, GemmKind::kDense, 0, 2}), "shape.top_k");
}

TEST(ValidateShapeTest, MoeNeedsExpertsAndTopK) {
  const QuantSpec spec;
  for (GemmKind kind : {GemmKind::kMoeIndexed, GemmKind::kMoeGrouped}) {
    ExpectInvalid(Check(spec, {128, 128, kind, 0, 0}), "shape.experts");
    ExpectInvalid(Check(spec, {128, 128, kind, 8, 0}), "shape.top_k");
    ExpectInvalid(Check(spec, {128, 128, kind, 8, 9}), "shape.top_k",
                  "(got 9)");
    EXPECT_TRUE(Check(spec, {128, 128, kind, 8, 8}).ok());
    EXPECT_TRUE(Check(spec, {128, 128, kind, 1, 1}).ok());
  }
}

// An MoE layer holds `experts` matrices: the count is bounded, and the cap
// counts all of them.
TEST(ValidateShapeTest, MoeExpertsAreBoundedAndCounted) {
  const QuantSpec spec;
  const int64_t max = std::numeric_limits<int64_t>::max();
  ExpectInvalid(Check(spec, {128, 128, GemmKind::kMoeIndexed, max, max}),
                "shape.experts");
  ExpectInvalid(
      Check(spec, {128, 128, GemmKind::kMoeIndexed, (int64_t{1} << 16) + 1, 1}),
      "shape.experts");
  EXPECT_TRUE(
      Check(spec, {128, 128, GemmKind::kMoeIndexed, int64_t{1} << 16, 1}).ok());
  ShapeLimits limits;
  limits.max_weight_elements = 8 * 128 * 256;
  EXPECT_TRUE(Check(spec, {128, 256, GemmKind::kMoeGrouped, 8, 2},
                    KernelFamily::kGemm, limits)
                  .ok());
  ExpectInvalid(Check(spec, {128, 256, GemmKind::kMoeGrouped, 9, 2},
                      KernelFamily::kGemm, limits),
                "shape", "experts*N*K = 294912");
}

TEST(ValidateShapeTest, DequantIsDenseOnly) {
  const QuantSpec spec;
  ExpectInvalid(Check(spec, {128, 128, GemmKind::kMoeGrouped, 8, 2},
                      KernelFamily::kDequant),
                "shape.kind", "dequant");
  ExpectInvalid(Check(spec, {128, 128, static_cast<GemmKind>(9), 0, 0}),
                "shape.kind");
}

}  // namespace
}  // namespace hummingd
