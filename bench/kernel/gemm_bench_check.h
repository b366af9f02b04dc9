#pragma once

// The host half of how hummingd_gemm_bench judges a case: the numerics check
// of KERNELS.md "Correctness method" (an fp64 reference on the exactly
// dequantized weights, ‖out − ref‖ / ‖ref‖ against 1e-3 / 8e-3, NaN fails)
// over a sample of the output, and the speed target of each (spec, N×K, M).
// Kept apart from the GPU code so that a unit test covers it on any host.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"
#include "kernels/reference/dequant_reference.h"

namespace hummingd::bench {

// A full fp64 reference of the largest cases (M = 8192, N×K = 8192×28672) is
// hours of CPU; a sample of the output that always holds the edges (first
// and last row and column, where tile remainders and split-K boundaries
// live) and is spread over the rest keeps each check well under a second.
inline constexpr int64_t kSampledColumns = 64;
inline constexpr int64_t kAllRowsUpToM = 256;
inline constexpr int64_t kSampledRowsAboveThat = 64;

// Up to `want` indices in [0, count), ascending and distinct, spread evenly,
// 0 and count − 1 always among them; every index when count <= want.
std::vector<int64_t> SpreadIndices(int64_t count, int64_t want);

// Output rows the check reads for M tokens: every one up to kAllRowsUpToM,
// else kSampledRowsAboveThat spread over M.
std::vector<int64_t> SampleRows(int64_t m);

// `count` values uniform in [-1, 1], encoded in `type` (fp16 or bf16) with
// the reference encoder, as raw bits. Deterministic in `seed` whatever the
// number of threads that draw them (an 8192×28672 activation is 235M values).
std::vector<uint16_t> RandomUnitBits(DataType type, int64_t count,
                                     uint64_t seed);

// The numerics bound of a spec with 16-bit activations: 1e-3, or 8e-3 when
// the output or the activations are bf16 (the weights are dequantized into
// the activation type, so bf16 operands carry bf16's 8-bit significand even
// into an fp16 output; tests/gpu/gemm_gpu_test.cc uses the same rule).
double NumericsBound(const QuantSpec& spec);

// Rows `rows` of the (N, K) weight matrix, (rows.size(), K) row-major,
// bit-identical to the same rows of ReferenceDequantize(spec, shape,
// inputs): each is dequantized by ReferenceDequantize itself from a slice of
// the checkpoint tensors (for block scales, the slice is its whole block
// row), so the whole matrix never is. INVALID_ARGUMENT for a bad spec/shape,
// buffer sizes that disagree with them, or a row outside [0, N).
absl::StatusOr<std::vector<float>> DequantizeWeightRows(
    const QuantSpec& spec, const LayerShape& shape, const DequantInputs& inputs,
    std::span<const int64_t> rows);

// What the numerics check needs of one (spec, N×K), built once and reused for
// every M: the sampled output columns, their weight rows and bias.
struct NumericsReference {
  DataType activation_type = DataType::kFp16;
  DataType output_type = DataType::kFp16;
  int64_t n = 0;
  int64_t k = 0;
  std::vector<int64_t> columns;     // SpreadIndices(N, kSampledColumns)
  std::vector<float> weight_rows;   // (columns.size(), K), exact
  std::vector<double> column_bias;  // per sampled column; empty: no bias
  double bound = 0;                 // NumericsBound(spec)
};

// `bias_bits`: the layer's (N) bias in the output type, empty when the spec
// has none. INVALID_ARGUMENT as DequantizeWeightRows, or when the bias size
// disagrees with spec.has_bias.
absl::StatusOr<NumericsReference> MakeNumericsReference(
    const QuantSpec& spec, const LayerShape& shape, const DequantInputs& inputs,
    std::span<const uint16_t> bias_bits);

// ref(i, j) = Σ_k x(i, k) · w(j, k) + bias(j) in fp64 (products of floats
// are exact in fp64); x is (R, K), w is (C, K), bias has C entries or none.
// Result (R, C) row-major; columns are spread over the host's cores.
std::vector<double> SampledReference(std::span<const float> x,
                                     std::span<const float> w,
                                     std::span<const double> bias, int64_t k);

struct NumericsResult {
  double relative_error = 0;  // ‖out − ref‖ / ‖ref‖ over the finite outputs
  int64_t non_finite = 0;  // NaN / inf outputs (each one fails the case)
  int64_t checked = 0;     // elements compared
  double bound = 0;
  bool ok = false;  // non_finite == 0 && relative_error <= bound
};

// `got` and `ref` are the same elements in the same order.
NumericsResult CompareToReference(std::span<const double> got,
                                  std::span<const double> ref, double bound);

// Judges output rows `rows` of one Forward: `y_rows` holds those rows, whole,
// as (rows.size(), N) output-type bits; `x_bits` is the (≥ M, K) activation
// the Forward read, in the activation type.
NumericsResult CheckOutputRows(const NumericsReference& reference,
                               std::span<const uint16_t> x_bits,
                               std::span<const int64_t> rows,
                               std::span<const uint16_t> y_rows);

// The speed target of one case in µs (KERNELS.md "Performance targets" and
// issue 5), nullopt where none is set:
//   M <= 64, N·K >= 8192², 4-bit weights: roofline / 0.8
//   M <= 64, N·K >= 8192², 8-bit weights: roofline / 0.75
//   M <= 64, N·K <  8192²:                roofline + 2.5 µs (launch floor)
//   M >= 1024:                            roofline / 0.9
//   64 < M < 1024, or other weight widths at large N·K at M <= 64: none.
std::optional<double> TargetUs(int weight_bits, int64_t n, int64_t k, int64_t m,
                               double roofline_us);

}  // namespace hummingd::bench
