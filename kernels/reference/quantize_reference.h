#pragma once

// CPU reference for quantize-from-float: a dense (N, K) fp32 matrix -> the
// buffers of the dequant contract (dequant_reference.h), round to nearest.
// The per-entry arithmetic (how a scale, zero point and code are chosen) is
// shared with the GPU quantize kernel through the __host__ __device__
// functions of kernels/device/numeric/quantize_encode.cuh, whose header
// states the rules; this file owns the traversal, the buffer layout and the
// packing, so the two produce byte-identical buffers.
//
// Secondary scales, when the spec has them, are all 1.0 (the quantizer puts
// the whole magnitude into the primary scales).

#include <vector>

#include "absl/status/statusor.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"
#include "kernels/reference/dequant_reference.h"

namespace hummingd {

// `weights`: N*K finite values, row-major. INVALID_ARGUMENT for an invalid
// spec/shape, a wrong element count ("quantize.weights: …") or a non-finite
// value; UNIMPLEMENTED for a float zero point whose dtype
// (spec.activation_type) is not fp16 or bf16.
absl::StatusOr<DequantInputs> ReferenceQuantize(
    const QuantSpec& spec, const LayerShape& shape,
    const std::vector<float>& weights);

}  // namespace hummingd
