#include "kernels/layer_shape.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"

namespace hummingd {
namespace {

// Each of N and K is compiled into a kernel; 2^20 is far above any real layer
// and keeps N*K (and any per-row byte count) far from int64 overflow.
constexpr int64_t kMaxDimension = int64_t{1} << 20;
// Far above any model (hundreds of experts); bounds experts * N * K.
constexpr int64_t kMaxExperts = int64_t{1} << 16;

// Every row of packed weights is a whole number of 32-bit words for any bit
// width 1..8 exactly when K is a multiple of 32.
constexpr int64_t kKAlignment = 32;

absl::Status Invalid(absl::string_view field, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", rule));
}

std::string GemmKindName(GemmKind kind) {
  switch (kind) {
    case GemmKind::kDense:
      return "dense";
    case GemmKind::kMoeIndexed:
      return "moe_indexed";
    case GemmKind::kMoeGrouped:
      return "moe_grouped";
  }
  return absl::StrCat("unknown value ", static_cast<int>(kind));
}

absl::Status ValidateDimension(absl::string_view field, int64_t value) {
  if (value <= 0) {
    return Invalid(field, absl::StrCat("must be > 0 (got ", value, ")"));
  }
  if (value > kMaxDimension) {
    return Invalid(field, absl::StrCat("must be <= ", kMaxDimension, " (got ",
                                       value, ")"));
  }
  return absl::OkStatus();
}

// `divisor` comes from the spec; a non-positive one means the spec was not
// validated, which is reported instead of dividing by it.
absl::Status ValidateMultiple(absl::string_view field, int64_t value,
                              absl::string_view divisor_field,
                              int64_t divisor) {
  if (divisor <= 0) {
    return Invalid(divisor_field,
                   absl::StrCat("must be > 0 (got ", divisor, ")"));
  }
  if (value % divisor != 0) {
    return Invalid(field, absl::StrCat("must be a multiple of ", divisor_field,
                                       "=", divisor, " (got ", value, ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateKind(const LayerShape& shape, KernelFamily family) {
  switch (family) {
    case KernelFamily::kDequant:
    case KernelFamily::kGemm:
      break;
    default:
      return Invalid("family",
                     absl::StrCat("unknown value ", static_cast<int>(family)));
  }
  switch (shape.kind) {
    case GemmKind::kDense:
      if (shape.experts != 0) {
        return Invalid("shape.experts",
                       absl::StrCat("must be 0 for dense layers (got ",
                                    shape.experts, ")"));
      }
      if (shape.top_k != 0) {
        return Invalid(
            "shape.top_k",
            absl::StrCat("must be 0 for dense layers (got ", shape.top_k, ")"));
      }
      return absl::OkStatus();
    case GemmKind::kMoeIndexed:
    case GemmKind::kMoeGrouped:
      if (family == KernelFamily::kDequant) {
        return Invalid("shape.kind",
                       absl::StrCat("the dequant family only supports dense "
                                    "layers (got ",
                                    GemmKindName(shape.kind), ")"));
      }
      if (shape.experts < 1 || shape.experts > kMaxExperts) {
        return Invalid(
            "shape.experts",
            absl::StrCat("must be in [1, ", kMaxExperts,
                         "] for MoE layers (got ", shape.experts, ")"));
      }
      if (shape.top_k < 1 || shape.top_k > shape.experts) {
        return Invalid(
            "shape.top_k",
            absl::StrCat("must be in [1, shape.experts=", shape.experts,
                         "] (got ", shape.top_k, ")"));
      }
      return absl::OkStatus();
  }
  return Invalid("shape.kind", GemmKindName(shape.kind));
}

}  // namespace

absl::Status ValidateShape(const QuantSpec& spec, const LayerShape& shape,
                           KernelFamily family, const ShapeLimits& limits) {
  RETURN_IF_ERROR(ValidateDimension("shape.n", shape.n));
  RETURN_IF_ERROR(ValidateDimension("shape.k", shape.k));
  if (shape.k % kKAlignment != 0) {
    return Invalid("shape.k",
                   absl::StrCat("must be a multiple of 32 so that every row of "
                                "packed weights is whole 32-bit words (got ",
                                shape.k, ")"));
  }
  if (spec.granularity == ScaleGranularity::kGroup) {
    RETURN_IF_ERROR(ValidateMultiple("shape.k", shape.k, "spec.group_size",
                                     spec.group_size));
  } else if (spec.granularity == ScaleGranularity::kBlock) {
    RETURN_IF_ERROR(
        ValidateMultiple("shape.k", shape.k, "spec.block_k", spec.block_k));
    RETURN_IF_ERROR(
        ValidateMultiple("shape.n", shape.n, "spec.block_n", spec.block_n));
  }
  RETURN_IF_ERROR(ValidateKind(shape, family));
  // Every factor is <= 2^20 (experts <= 2^16), so the product cannot
  // overflow. An MoE layer holds `experts` such matrices.
  const int64_t matrices = shape.experts > 0 ? shape.experts : 1;
  const int64_t elements = shape.n * shape.k * matrices;
  if (elements > limits.max_weight_elements) {
    return Invalid("shape",
                   absl::StrCat(matrices > 1 ? "experts*N*K = " : "N*K = ",
                                elements, " exceeds the configured cap of ",
                                limits.max_weight_elements, " elements"));
  }
  return absl::OkStatus();
}

}  // namespace hummingd
