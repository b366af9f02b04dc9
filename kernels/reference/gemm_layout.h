#pragma once

// The GEMM weight layout ("fragment order") and its CPU reference. The GEMM
// kernels read weights in this layout; the GPU repack kernel
// (kernels/device/pack/repack_weights.cuh, skeleton "repack") produces it
// from the checkpoint layout (weight_packing.h) and must match
// RepackWeightsForGemm byte for byte.
//
//   W (N x K codes of `bits` bits) is cut into units of 16 rows x 64
//   columns (N % 16 == 0, K % 64 == 0). Units are stored n-unit major:
//   unit (nu, ku) is unit number u = nu * (K / 64) + ku, so the 16-row
//   stripe nu is one contiguous run of K/64 units. A unit is 32 lanes x
//   `bits` words: lane l's words are words [(u * 32 + l) * bits, ... + bits)
//   of the buffer, one little-endian bit stream of 32 codes (code i at
//   stream bits [i * bits, (i + 1) * bits), LSB first, as in the
//   checkpoint layout).
//   With g = l / 4, t = l % 4 and i = ((s * 2 + j) * 2 + r) * 2 + h
//   (s k16-step 0..3, j n-half 0..1, r register 0..1, h half 0..1), code i
//   of lane l is element
//       W[16 nu + 8 j + g][64 ku + 16 s + 8 r + 2 t + h],
//   i.e. for k-step s and n8 tile j, codes (r, h) are exactly the m16n8k16
//   B-operand register b_r (h = low / high half) of lane l. For 4-bit codes
//   a lane's 32 codes are one 16-byte load.
//
// Total size is unchanged: N * K * bits / 32 words. Scales, zero points and
// secondary scales stay in the checkpoint layout (dequant_reference.h) in
// v1; the kernel indexes them directly.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hummingd {

// Where element (row, col) of W lives in the fragment layout.
struct GemmFragmentPosition {
  int64_t unit = 0;
  int lane = 0;
  int code = 0;  // index in the lane's 32-code bit stream
};

GemmFragmentPosition GemmFragmentPositionOf(int64_t row, int64_t col,
                                            int64_t k);

// INVALID_ARGUMENT unless bits is 1..8, N > 0 a multiple of 16 and K > 0 a
// multiple of 64 (the field named).
absl::Status ValidateGemmWeightShape(int64_t n, int64_t k, int bits);

// checkpoint: (N, K*bits/32) words (weight_packing.h) -> fragment order.
absl::StatusOr<std::vector<uint32_t>> RepackWeightsForGemm(
    const std::vector<uint32_t>& checkpoint, int64_t n, int64_t k, int bits);

// Inverse: fragment order -> checkpoint layout.
absl::StatusOr<std::vector<uint32_t>> UnrepackWeightsFromGemm(
    const std::vector<uint32_t>& fragments, int64_t n, int64_t k, int bits);

}  // namespace hummingd
