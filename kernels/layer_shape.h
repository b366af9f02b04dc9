#pragma once

// The shape half of a request: N and K are compiled into kernels, M is not.

#include <cstdint>

#include "absl/status/status.h"
#include "kernels/quant_spec.h"

namespace hummingd {

enum class KernelFamily : uint8_t {
  kDequant = 1,  // quantized weights -> dense fp16/bf16 matrix
  kGemm = 2,     // quantized GEMM (later issues)
};

enum class GemmKind : uint8_t {
  kDense = 1,
  kMoeIndexed = 2,
  kMoeGrouped = 3,
};

struct LayerShape {
  int64_t n = 0;  // output features (rows of W)
  int64_t k = 0;  // input features (columns of W)
  GemmKind kind = GemmKind::kDense;
  int64_t experts = 0;  // MoE only
  int64_t top_k = 0;    // MoE only

  bool operator==(const LayerShape&) const = default;
};

struct ShapeLimits {
  // Refuse absurd layers before they reach a compiler: N*K above this is
  // RESOURCE_EXHAUSTED-worthy nonsense for one layer (default 2^34 elements).
  int64_t max_weight_elements = int64_t{1} << 34;
};

// Validates a shape against the spec it will be used with; INVALID_ARGUMENT
// naming the field and the rule ("shape.k: must be a multiple of
// spec.group_size=128 (got 4100)").
absl::Status ValidateShape(const QuantSpec& spec, const LayerShape& shape,
                           KernelFamily family, const ShapeLimits& limits);

}  // namespace hummingd
