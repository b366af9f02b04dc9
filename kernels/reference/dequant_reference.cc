#include "kernels/reference/dequant_reference.h"

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/parallel_for.h"
#include "common/status_macros.h"
#include "kernels/reference/format_reference.h"
#include "kernels/reference/weight_packing.h"

namespace hummingd {
namespace {

absl::Status CheckSize(absl::string_view buffer, size_t actual,
                       int64_t expected, absl::string_view unit) {
  if (static_cast<int64_t>(actual) != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat("dequant.", buffer, ": expected ", expected, " ", unit,
                     " (got ", actual, ")"));
  }
  return absl::OkStatus();
}

// Reads element `index` of a buffer of little-endian elements `bytes` wide.
uint32_t ReadLittleEndian(const std::vector<uint8_t>& buffer, int64_t index,
                          int bytes) {
  uint32_t value = 0;
  for (int b = 0; b < bytes; ++b) {
    value |= static_cast<uint32_t>(buffer[index * bytes + b]) << (8 * b);
  }
  return value;
}

void AppendLittleEndian(uint32_t value, int bytes, std::vector<uint8_t>* out) {
  for (int b = 0; b < bytes; ++b) {
    out->push_back(static_cast<uint8_t>((value >> (8 * b)) & 0xFFu));
  }
}

// SplitMix64: tiny, portable and fully specified, so a seed reproduces the
// same inputs on every platform and standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound); bound is small, so the modulo bias is negligible.
  uint32_t Below(uint32_t bound) {
    return static_cast<uint32_t>(Next() % bound);
  }
  // Uniform in [0, 1).
  double Unit() { return std::ldexp(static_cast<double>(Next() >> 11), -53); }

 private:
  uint64_t state_;
};

std::vector<uint8_t> RandomCodes(const WeightType& weight, int64_t count,
                                 Rng& rng) {
  std::vector<uint8_t> codes(count);
  const uint32_t code_count = uint32_t{1} << weight.bits;
  // Decoding every drawn code to ask whether it is special cost seconds per
  // real layer (the benchmark draws 235 M codes for 28672 x 8192); the
  // answer per code is a table of at most 256 entries.
  std::vector<bool> special(code_count);
  for (uint32_t code = 0; code < code_count; ++code) {
    special[code] = ReferenceWeightCodeIsSpecial(weight, code);
  }
  // Below(code_count) without its 64-bit division: code_count is a power
  // of two, so the remainder is a mask (the same codes, seed for seed).
  const uint64_t mask = code_count - 1;
  for (uint8_t& code : codes) {
    uint32_t candidate = static_cast<uint32_t>(rng.Next() & mask);
    while (special[candidate]) {
      candidate = static_cast<uint32_t>(rng.Next() & mask);
    }
    code = static_cast<uint8_t>(candidate);
  }
  return codes;
}

uint32_t RandomScaleBits(DataType type, Rng& rng) {
  while (true) {
    const int exponent = -7 + static_cast<int>(rng.Below(6));  // -7 .. -2
    const double magnitude = std::ldexp(1.0 + rng.Unit(), exponent);
    const uint32_t bits =
        ReferenceEncodeFloat(static_cast<float>(magnitude), type);
    const float decoded = ReferenceDecodeScale(type, bits);
    if (std::isfinite(decoded) && decoded > 0) return bits;
  }
}

bool AnyNonZero(const std::vector<float>& values) {
  for (float v : values) {
    if (v != 0) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<DequantLayout> DequantBufferLayout(const QuantSpec& spec,
                                                  const LayerShape& shape) {
  RETURN_IF_ERROR(ValidateSpec(spec));
  RETURN_IF_ERROR(
      ValidateShape(spec, shape, KernelFamily::kDequant, ShapeLimits{}));
  DequantLayout layout;
  layout.weight_words = shape.n * PackedWordsPerRow(shape.k, spec.weight.bits);
  switch (spec.granularity) {
    case ScaleGranularity::kGroup:
      layout.scale_rows = shape.n;
      layout.scale_cols = shape.k / spec.group_size;
      break;
    case ScaleGranularity::kChannel:
      layout.scale_rows = shape.n;
      layout.scale_cols = 1;
      break;
    case ScaleGranularity::kBlock:
      layout.scale_rows = shape.n / spec.block_n;
      layout.scale_cols = shape.k / spec.block_k;
      break;
    case ScaleGranularity::kTensor:
      layout.scale_rows = 1;
      layout.scale_cols = 1;
      break;
  }
  layout.scale_entries = layout.scale_rows * layout.scale_cols;
  layout.scale_bytes = layout.scale_entries * DataTypeBytes(spec.scale_type);
  switch (spec.zero_point) {
    case ZeroPointKind::kNone:
      layout.zero_point_bytes = 0;
      break;
    case ZeroPointKind::kInteger:
      layout.zero_point_bytes = layout.scale_entries;
      break;
    case ZeroPointKind::kFloat:
      layout.zero_point_bytes =
          layout.scale_entries * DataTypeBytes(spec.activation_type);
      break;
  }
  switch (spec.secondary_scale) {
    case SecondaryScale::kNone:
      layout.secondary_entries = 0;
      break;
    case SecondaryScale::kTensor:
      layout.secondary_entries = 1;
      break;
    case SecondaryScale::kChannel:
      layout.secondary_entries = shape.n;
      break;
  }
  return layout;
}

int64_t ScaleEntryIndex(const QuantSpec& spec, const LayerShape& shape,
                        int64_t row, int64_t col) {
  switch (spec.granularity) {
    case ScaleGranularity::kGroup:
      return row * (shape.k / spec.group_size) + col / spec.group_size;
    case ScaleGranularity::kChannel:
      return row;
    case ScaleGranularity::kBlock:
      return (row / spec.block_n) * (shape.k / spec.block_k) +
             col / spec.block_k;
    case ScaleGranularity::kTensor:
      return 0;
  }
  return 0;
}

absl::StatusOr<std::vector<float>> ReferenceDequantize(
    const QuantSpec& spec, const LayerShape& shape,
    const DequantInputs& inputs) {
  ASSIGN_OR_RETURN(const DequantLayout layout,
                   DequantBufferLayout(spec, shape));
  RETURN_IF_ERROR(CheckSize("weights", inputs.weights.size(),
                            layout.weight_words, "uint32 words"));
  RETURN_IF_ERROR(
      CheckSize("scales", inputs.scales.size(), layout.scale_bytes, "bytes"));
  RETURN_IF_ERROR(CheckSize("zero_points", inputs.zero_points.size(),
                            layout.zero_point_bytes, "bytes"));
  RETURN_IF_ERROR(CheckSize("secondary_scales", inputs.secondary_scales.size(),
                            layout.secondary_entries, "fp32 values"));
  ASSIGN_OR_RETURN(
      const std::vector<uint8_t> codes,
      UnpackCodes(inputs.weights, shape.n, shape.k, spec.weight.bits));

  const int scale_bytes = DataTypeBytes(spec.scale_type);
  const int64_t code_count = int64_t{1} << spec.weight.bits;
  // Decode every scale entry and zero point once.
  std::vector<double> scales(layout.scale_entries);
  std::vector<double> zeros(layout.scale_entries, 0.0);
  for (int64_t e = 0; e < layout.scale_entries; ++e) {
    scales[e] = ReferenceDecodeScale(
        spec.scale_type, ReadLittleEndian(inputs.scales, e, scale_bytes));
    if (spec.zero_point == ZeroPointKind::kInteger) {
      if (inputs.zero_points[e] >= code_count) {
        return absl::InvalidArgumentError(absl::StrCat(
            "dequant.zero_points: entry ", e, " is ",
            static_cast<int>(inputs.zero_points[e]), ", outside the ",
            spec.weight.bits, "-bit code range"));
      }
      zeros[e] = inputs.zero_points[e];
    } else if (spec.zero_point == ZeroPointKind::kFloat) {
      const int zero_bytes = DataTypeBytes(spec.activation_type);
      zeros[e] = ReferenceDecodeScale(
          spec.activation_type,
          ReadLittleEndian(inputs.zero_points, e, zero_bytes));
    }
  }
  const bool implicit_midpoint = spec.weight.kind == WeightKind::kUint &&
                                 spec.zero_point == ZeroPointKind::kNone;
  const double midpoint = static_cast<double>(code_count / 2);

  std::vector<float> out(shape.n * shape.k);
  // Rows are independent; a real layer took seconds on one core (and a
  // thread gets at least 64 K weights: the bench dequantizes slabs too).
  const int64_t min_rows = MinItemsPerWorker(shape.k);
  ParallelFor(
      shape.n,
      [&](int worker, int workers) {
        for (int64_t row = worker; row < shape.n; row += workers) {
          double secondary = 1.0;
          if (spec.secondary_scale == SecondaryScale::kTensor) {
            secondary = inputs.secondary_scales[0];
          } else if (spec.secondary_scale == SecondaryScale::kChannel) {
            secondary = inputs.secondary_scales[row];
          }
          for (int64_t col = 0; col < shape.k; ++col) {
            const int64_t entry = ScaleEntryIndex(spec, shape, row, col);
            const uint32_t code = codes[row * shape.k + col];
            double value;
            if (spec.weight.kind == WeightKind::kUint) {
              value = static_cast<double>(code) -
                      (implicit_midpoint ? midpoint : zeros[entry]);
            } else {
              value = ReferenceDecodeWeightCode(spec.weight, code);
            }
            out[row * shape.k + col] =
                static_cast<float>(value * scales[entry] * secondary);
          }
        }
      },
      min_rows);
  return out;
}

absl::StatusOr<std::vector<uint16_t>> RoundToOutputBits(
    std::span<const float> values, DataType output_type) {
  if (output_type != DataType::kFp16 && output_type != DataType::kBf16) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.output_type: must be fp16 or bf16 (got ",
                     DataTypeName(output_type), ")"));
  }
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    bits[i] =
        static_cast<uint16_t>(ReferenceEncodeFloat(values[i], output_type));
  }
  return bits;
}

DequantInputs MakeRandomDequantInputs(const QuantSpec& spec,
                                      const LayerShape& shape, uint64_t seed) {
  absl::StatusOr<DequantLayout> layout = DequantBufferLayout(spec, shape);
  if (!layout.ok()) return DequantInputs{};
  Rng rng(seed);
  DequantInputs inputs;
  const int scale_bytes = DataTypeBytes(spec.scale_type);
  for (int64_t e = 0; e < layout->scale_entries; ++e) {
    AppendLittleEndian(RandomScaleBits(spec.scale_type, rng), scale_bytes,
                       &inputs.scales);
  }
  const uint32_t code_count = uint32_t{1} << spec.weight.bits;
  for (int64_t e = 0; e < layout->scale_entries; ++e) {
    if (spec.zero_point == ZeroPointKind::kInteger) {
      inputs.zero_points.push_back(static_cast<uint8_t>(rng.Below(code_count)));
    } else if (spec.zero_point == ZeroPointKind::kFloat) {
      const double zero = rng.Unit() * static_cast<double>(code_count - 1);
      AppendLittleEndian(
          ReferenceEncodeFloat(static_cast<float>(zero), spec.activation_type),
          DataTypeBytes(spec.activation_type), &inputs.zero_points);
    }
  }
  for (int64_t e = 0; e < layout->secondary_entries; ++e) {
    inputs.secondary_scales.push_back(
        static_cast<float>(0.5 + 1.5 * rng.Unit()));
  }
  // Redraw the codes in the (possible for tiny 1-bit layers) case that
  // every weight dequantizes to zero. Past 64 K weights that cannot happen
  // in practice, and dequantizing a real layer in full just to look would
  // cost seconds and gigabytes (a 8192 x 28672 layer: 940 MB of floats).
  constexpr int64_t kAllZeroCheckMaxWeights = int64_t{1} << 16;
  while (true) {
    absl::StatusOr<std::vector<uint32_t>> packed =
        PackCodes(RandomCodes(spec.weight, shape.n * shape.k, rng), shape.n,
                  shape.k, spec.weight.bits);
    if (!packed.ok()) return DequantInputs{};
    inputs.weights = *std::move(packed);
    if (shape.n * shape.k > kAllZeroCheckMaxWeights) return inputs;
    absl::StatusOr<std::vector<float>> values =
        ReferenceDequantize(spec, shape, inputs);
    if (!values.ok()) return DequantInputs{};
    if (AnyNonZero(*values)) return inputs;
  }
}

}  // namespace hummingd
