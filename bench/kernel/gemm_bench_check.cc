#include "bench/kernel/gemm_bench_check.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "common/status_macros.h"
#include "kernels/reference/format_reference.h"
#include "kernels/reference/fp64_dot.h"
#include "kernels/reference/weight_packing.h"

namespace hummingd::bench {
namespace {

absl::Status CheckSize(const char* buffer, size_t actual, int64_t expected) {
  if (static_cast<int64_t>(actual) == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("dequant.", buffer, ": expected ", expected,
                   " elements (got ", actual, ")"));
}

}  // namespace

std::vector<int64_t> SpreadIndices(int64_t count, int64_t want) {
  std::vector<int64_t> indices;
  if (count <= 0 || want <= 0) return indices;
  if (count <= want || want == 1) {
    for (int64_t i = 0; i < std::min(count, want); ++i) indices.push_back(i);
    return indices;
  }
  // Rounded i·(count−1)/(want−1): steps are >= 1 since count > want, so the
  // indices are distinct, and the ends are exactly 0 and count − 1.
  for (int64_t i = 0; i < want; ++i) {
    indices.push_back((i * (count - 1) + (want - 1) / 2) / (want - 1));
  }
  return indices;
}

std::vector<int64_t> SampleRows(int64_t m) {
  return SpreadIndices(m, m <= kAllRowsUpToM ? m : kSampledRowsAboveThat);
}

std::vector<uint16_t> RandomUnitBits(DataType type, int64_t count,
                                     uint64_t seed) {
  // Chunks with their own generator make the values independent of the
  // thread count; mt19937_64 is fully specified, so of the platform too.
  constexpr int64_t kChunk = int64_t{1} << 16;
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  std::vector<uint16_t> bits(count);
  ParallelFor(chunks, [&](int worker, int workers) {
    for (int64_t chunk = worker; chunk < chunks; chunk += workers) {
      std::mt19937_64 rng(seed + 0x9E3779B97F4A7C15ull *
                                     static_cast<uint64_t>(chunk + 1));
      const int64_t end = std::min(count, (chunk + 1) * kChunk);
      for (int64_t i = chunk * kChunk; i < end; ++i) {
        const double unit = std::ldexp(static_cast<double>(rng() >> 11), -53);
        bits[i] = static_cast<uint16_t>(
            ReferenceEncodeFloat(static_cast<float>(2.0 * unit - 1.0), type));
      }
    }
  });
  return bits;
}

double NumericsBound(const QuantSpec& spec) {
  return spec.output_type == DataType::kBf16 ||
                 spec.activation_type == DataType::kBf16
             ? 8e-3
             : 1e-3;
}

absl::StatusOr<std::vector<float>> DequantizeWeightRows(
    const QuantSpec& spec, const LayerShape& shape, const DequantInputs& inputs,
    std::span<const int64_t> rows) {
  ASSIGN_OR_RETURN(const DequantLayout layout,
                   DequantBufferLayout(spec, shape));
  RETURN_IF_ERROR(
      CheckSize("weights", inputs.weights.size(), layout.weight_words));
  RETURN_IF_ERROR(
      CheckSize("scales", inputs.scales.size(), layout.scale_bytes));
  RETURN_IF_ERROR(CheckSize("zero_points", inputs.zero_points.size(),
                            layout.zero_point_bytes));
  RETURN_IF_ERROR(CheckSize("secondary_scales", inputs.secondary_scales.size(),
                            layout.secondary_entries));
  const int64_t words_per_row = PackedWordsPerRow(shape.k, spec.weight.bits);
  const int64_t scale_bytes = DataTypeBytes(spec.scale_type);
  const int64_t zero_bytes = layout.zero_point_bytes / layout.scale_entries;
  // Block scales tie block_n rows together; every other kind leaves each row
  // a layer of its own.
  const int64_t slab_rows =
      spec.granularity == ScaleGranularity::kBlock ? spec.block_n : 1;
  LayerShape slab_shape = shape;
  slab_shape.n = slab_rows;

  std::vector<float> out;
  out.reserve(rows.size() * shape.k);
  for (const int64_t row : rows) {
    if (row < 0 || row >= shape.n) {
      return absl::InvalidArgumentError(
          absl::StrCat("rows: ", row, " is outside [0, N=", shape.n, ")"));
    }
    const int64_t first = row - row % slab_rows;
    // The slab's scale entries are one contiguous run of the row-major grid
    // (a tensor scale: its only entry), and each keeps its offset from the
    // run's start, so the slab is a valid layer of its own.
    const int64_t entry_begin = ScaleEntryIndex(spec, shape, first, 0);
    const int64_t entry_end =
        ScaleEntryIndex(spec, shape, first + slab_rows - 1, shape.k - 1) + 1;
    DequantInputs slab;
    slab.weights.assign(
        inputs.weights.begin() + first * words_per_row,
        inputs.weights.begin() + (first + slab_rows) * words_per_row);
    slab.scales.assign(inputs.scales.begin() + entry_begin * scale_bytes,
                       inputs.scales.begin() + entry_end * scale_bytes);
    if (zero_bytes > 0) {
      slab.zero_points.assign(
          inputs.zero_points.begin() + entry_begin * zero_bytes,
          inputs.zero_points.begin() + entry_end * zero_bytes);
    }
    if (spec.secondary_scale == SecondaryScale::kTensor) {
      slab.secondary_scales = inputs.secondary_scales;
    } else if (spec.secondary_scale == SecondaryScale::kChannel) {
      slab.secondary_scales.assign(
          inputs.secondary_scales.begin() + first,
          inputs.secondary_scales.begin() + first + slab_rows);
    }
    ASSIGN_OR_RETURN(const std::vector<float> values,
                     ReferenceDequantize(spec, slab_shape, slab));
    const auto row_begin = values.begin() + (row - first) * shape.k;
    out.insert(out.end(), row_begin, row_begin + shape.k);
  }
  return out;
}

absl::StatusOr<NumericsReference> MakeNumericsReference(
    const QuantSpec& spec, const LayerShape& shape, const DequantInputs& inputs,
    std::span<const uint16_t> bias_bits) {
  const int64_t expected_bias = spec.has_bias ? shape.n : 0;
  if (static_cast<int64_t>(bias_bits.size()) != expected_bias) {
    return absl::InvalidArgumentError(
        absl::StrCat("bias: expected ", expected_bias, " values (got ",
                     bias_bits.size(), ")"));
  }
  NumericsReference reference;
  reference.activation_type = spec.activation_type;
  reference.output_type = spec.output_type;
  reference.n = shape.n;
  reference.k = shape.k;
  reference.columns = SpreadIndices(shape.n, kSampledColumns);
  ASSIGN_OR_RETURN(
      reference.weight_rows,
      DequantizeWeightRows(spec, shape, inputs, reference.columns));
  for (const int64_t column : reference.columns) {
    if (spec.has_bias) {
      reference.column_bias.push_back(
          ReferenceDecodeScale(spec.output_type, bias_bits[column]));
    }
  }
  reference.bound = NumericsBound(spec);
  return reference;
}

std::vector<double> SampledReference(std::span<const float> x,
                                     std::span<const float> w,
                                     std::span<const double> bias, int64_t k) {
  const int64_t rows = static_cast<int64_t>(x.size()) / k;
  const int64_t columns = static_cast<int64_t>(w.size()) / k;
  std::vector<double> out(rows * columns);
  ParallelFor(columns, [&](int worker, int workers) {
    for (int64_t j = worker; j < columns; j += workers) {
      const float* w_row = &w[j * k];
      for (int64_t i = 0; i < rows; ++i) {
        out[i * columns + j] =
            Fp64Dot(&x[i * k], w_row, k) + (bias.empty() ? 0.0 : bias[j]);
      }
    }
  });
  return out;
}

NumericsResult CompareToReference(std::span<const double> got,
                                  std::span<const double> ref, double bound) {
  NumericsResult result;
  result.bound = bound;
  double diff = 0;
  double norm = 0;
  for (size_t i = 0; i < got.size() && i < ref.size(); ++i) {
    ++result.checked;
    if (!std::isfinite(got[i])) {
      ++result.non_finite;
      continue;
    }
    diff += (got[i] - ref[i]) * (got[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  result.relative_error = std::sqrt(diff / std::max(norm, 1e-300));
  result.ok = result.non_finite == 0 && result.relative_error <= bound &&
              got.size() == ref.size();
  return result;
}

NumericsResult CheckOutputRows(const NumericsReference& reference,
                               std::span<const uint16_t> x_bits,
                               std::span<const int64_t> rows,
                               std::span<const uint16_t> y_rows) {
  const int64_t k = reference.k;
  const int64_t columns = static_cast<int64_t>(reference.columns.size());
  std::vector<float> x(rows.size() * k);
  std::vector<double> got(rows.size() * columns);
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int64_t c = 0; c < k; ++c) {
      x[i * k + c] = ReferenceDecodeScale(reference.activation_type,
                                          x_bits[rows[i] * k + c]);
    }
    for (int64_t j = 0; j < columns; ++j) {
      got[i * columns + j] =
          ReferenceDecodeScale(reference.output_type,
                               y_rows[i * reference.n + reference.columns[j]]);
    }
  }
  const std::vector<double> ref =
      SampledReference(x, reference.weight_rows, reference.column_bias, k);
  return CompareToReference(got, ref, reference.bound);
}

std::optional<double> TargetUs(int weight_bits, int64_t n, int64_t k, int64_t m,
                               double roofline_us) {
  constexpr int64_t kLargeLayer = int64_t{8192} * 8192;
  if (m >= 1024) return roofline_us / 0.9;
  if (m > 64) return std::nullopt;
  // Small layers are a few µs at the roofline, where a fixed launch and
  // split-K reduction cost dominates any ratio; they get an absolute margin.
  if (n * k < kLargeLayer) return roofline_us + 2.5;
  if (weight_bits == 4) return roofline_us / 0.8;
  if (weight_bits == 8) return roofline_us / 0.75;
  return std::nullopt;
}

}  // namespace hummingd::bench
