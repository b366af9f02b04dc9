#pragma once

// CPU reference for the dequant family: quantized weights + scales (+ zero
// points, + secondary scale) -> dense (N, K) matrix. It defines what the
// device dequant kernels must compute.
//
// Buffer layout contract (what callers pass and device kernels must read):
//
//   weights     uint32 words, (N, K * bits / 32) row-major. Row r is a
//               little-endian bit stream (bit j = bit j % 32 of word j / 32);
//               the code of element (r, c) occupies stream bits
//               [c * bits, (c + 1) * bits), LSB first (weight_packing.h).
//   scales      raw little-endian elements of spec.scale_type
//               (DataTypeBytes(scale_type) bytes each), row-major over:
//                 kGroup   (N, K / group_size)   entry (r, c / group_size)
//                 kChannel (N)                   entry r
//                 kBlock   (N / block_n, K / block_k)
//                                        entry (r / block_n, c / block_k)
//                 kTensor  (1)                   entry 0
//   zero_points empty for ZeroPointKind::kNone; otherwise one element per
//               scale entry, same shape and indexing as the scales:
//                 kInteger one uint8 per entry, value < 2^bits
//                 kFloat   one little-endian element of spec.activation_type
//                          (fp16 or bf16, 2 bytes) per entry
//   secondary   fp32; empty for kNone, 1 value for kTensor, N values (one per
//   _scales     row) for kChannel.
//
// Semantics, for element (r, c) with code q, scale entry s, zero point z and
// secondary multiplier t (1 when there is none):
//   value = q - 2^(bits-1)  for kUint without a zero point (implicit midpoint)
//         = q - z           for kUint with an integer or float zero point
//         = decode(q)       for kInt and kFloat weights
//                           (ReferenceDecodeWeightCode)
//   w     = value * s * t
// computed in double and rounded once to fp32. The stored output is w rounded
// to spec.output_type with round-to-nearest-even (RoundToOutputBits).

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"

namespace hummingd {

struct DequantInputs {
  std::vector<uint32_t> weights;
  std::vector<uint8_t> scales;
  std::vector<uint8_t> zero_points;
  std::vector<float> secondary_scales;
};

// Sizes of every buffer for a (spec, shape), in elements and bytes.
struct DequantLayout {
  int64_t weight_words = 0;  // N * K * bits / 32
  int64_t scale_rows = 0;    // leading dimension of the scale grid
  int64_t scale_cols = 0;    // trailing dimension (1 for channel / tensor)
  int64_t scale_entries = 0;
  int64_t scale_bytes = 0;
  int64_t zero_point_bytes = 0;  // 0 for ZeroPointKind::kNone
  int64_t secondary_entries = 0;
};

// Validates spec and shape (ValidateSpec, ValidateShape for kDequant) and
// returns the buffer sizes the contract above implies.
absl::StatusOr<DequantLayout> DequantBufferLayout(const QuantSpec& spec,
                                                  const LayerShape& shape);

// Index of the scale (and zero-point) entry for weight element (row, col),
// per the contract above. Requires a validated spec and shape.
int64_t ScaleEntryIndex(const QuantSpec& spec, const LayerShape& shape,
                        int64_t row, int64_t col);

// Dense (N, K) fp32 result, row-major, before rounding to the output type.
// INVALID_ARGUMENT for an invalid spec/shape, a buffer of the wrong size
// (naming the buffer: "dequant.scales: …") or an integer zero point outside
// the code range.
absl::StatusOr<std::vector<float>> ReferenceDequantize(
    const QuantSpec& spec, const LayerShape& shape,
    const DequantInputs& inputs);

// Raw fp16 / bf16 bits of each value, round-to-nearest-even.
// INVALID_ARGUMENT unless `output_type` is kFp16 or kBf16.
absl::StatusOr<std::vector<uint16_t>> RoundToOutputBits(
    std::span<const float> values, DataType output_type);

// Random, valid inputs for a validated (spec, shape), deterministic in
// `seed`: uniform codes (float weights never draw NaN/inf codes), positive
// scales with magnitudes in [2^-7, 2^-1) encoded in scale_type (never zero,
// NaN or inf after encoding), integer zero points uniform in [0, 2^bits),
// float zero points uniform in [0, 2^bits - 1] encoded in the activation
// type, secondary scales uniform in [0.5, 2). Up to 64 K weights the
// dequantized result is checked (and redrawn) never to be all zeros; larger
// layers are not dequantized here. Empty buffers if the spec or shape is
// invalid.
DequantInputs MakeRandomDequantInputs(const QuantSpec& spec,
                                      const LayerShape& shape, uint64_t seed);

}  // namespace hummingd
