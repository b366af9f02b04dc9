#include "kernels/reference/quantize_reference.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/reference/weight_packing.h"
#include "numeric/quantize_encode.cuh"

namespace hummingd {
namespace {

namespace hd = ::hummingd::device;

// The host enums mirror the device ones value for value (formats.cuh).
hd::QuantizeFormat DeviceFormat(const QuantSpec& spec) {
  hd::QuantizeFormat format{};
  format.kind = static_cast<hd::CodeKind>(spec.weight.kind);
  format.bits = spec.weight.bits;
  format.exponent_bits = spec.weight.exponent_bits;
  format.mantissa_bits = spec.weight.mantissa_bits;
  format.zero = static_cast<hd::ZeroKind>(spec.zero_point);
  format.scale_type = static_cast<hd::ScalarType>(spec.scale_type);
  format.zero_type = spec.activation_type == DataType::kBf16
                         ? hd::ScalarType::kBf16
                         : hd::ScalarType::kFp16;
  return format;
}

void AppendLittleEndian(uint32_t value, int bytes, std::vector<uint8_t>* out) {
  for (int b = 0; b < bytes; ++b) {
    out->push_back(static_cast<uint8_t>((value >> (8 * b)) & 0xFFu));
  }
}

}  // namespace

absl::StatusOr<DequantInputs> ReferenceQuantize(
    const QuantSpec& spec, const LayerShape& shape,
    const std::vector<float>& weights) {
  ASSIGN_OR_RETURN(const DequantLayout layout,
                   DequantBufferLayout(spec, shape));
  if (static_cast<int64_t>(weights.size()) != shape.n * shape.k) {
    return absl::InvalidArgumentError(
        absl::StrCat("quantize.weights: expected ", shape.n * shape.k,
                     " values (got ", weights.size(), ")"));
  }
  if (spec.zero_point == ZeroPointKind::kFloat &&
      spec.activation_type != DataType::kFp16 &&
      spec.activation_type != DataType::kBf16) {
    return absl::UnimplementedError(
        "spec.activation_type: float zero points are fp16 or bf16");
  }
  // Per-entry range, always including zero (so an integer zero point is a
  // valid code and symmetric formats see the absolute maximum).
  std::vector<float> lo(layout.scale_entries, 0.0f);
  std::vector<float> hi(layout.scale_entries, 0.0f);
  for (int64_t row = 0; row < shape.n; ++row) {
    for (int64_t col = 0; col < shape.k; ++col) {
      const float w = weights[row * shape.k + col];
      if (!std::isfinite(w)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "quantize.weights: element (", row, ", ", col, ") is not finite"));
      }
      const int64_t e = ScaleEntryIndex(spec, shape, row, col);
      lo[e] = w < lo[e] ? w : lo[e];
      hi[e] = w > hi[e] ? w : hi[e];
    }
  }
  const hd::QuantizeFormat format = DeviceFormat(spec);
  std::vector<hd::QuantizeEntry> entries(layout.scale_entries);
  DequantInputs out;
  const int scale_bytes = DataTypeBytes(spec.scale_type);
  for (int64_t e = 0; e < layout.scale_entries; ++e) {
    entries[e] = hd::make_quantize_entry(format, lo[e], hi[e]);
    AppendLittleEndian(entries[e].scale_bits, scale_bytes, &out.scales);
    if (spec.zero_point == ZeroPointKind::kInteger) {
      AppendLittleEndian(entries[e].zero_bits, 1, &out.zero_points);
    } else if (spec.zero_point == ZeroPointKind::kFloat) {
      AppendLittleEndian(entries[e].zero_bits, 2, &out.zero_points);
    }
  }
  std::vector<uint8_t> codes(shape.n * shape.k);
  for (int64_t row = 0; row < shape.n; ++row) {
    for (int64_t col = 0; col < shape.k; ++col) {
      const int64_t e = ScaleEntryIndex(spec, shape, row, col);
      codes[row * shape.k + col] = static_cast<uint8_t>(
          hd::quantize_code(format, entries[e], weights[row * shape.k + col]));
    }
  }
  ASSIGN_OR_RETURN(out.weights,
                   PackCodes(codes, shape.n, shape.k, spec.weight.bits));
  out.secondary_scales.assign(layout.secondary_entries, 1.0f);
  return out;
}

}  // namespace hummingd
