#pragma once

// The checkpoint-style layout of quantized weights, which is what callers
// hand to the dequant kernels and to the GPU repack:
//
//   weights are (N, K * bits / 32) uint32 words, row-major. Each row is a
//   little-endian bit stream: bit j of the stream is bit (j % 32) of word
//   j / 32 of that row, and code i of the row occupies stream bits
//   [i * bits, (i + 1) * bits), least significant bit first. Codes of 3, 5, 6
//   and 7 bits may straddle two words. K * bits must be a multiple of 32
//   (ValidateShape's K % 32 == 0 guarantees it for every width 1..8).

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace hummingd {

// Words per packed row: K * bits / 32.
int64_t PackedWordsPerRow(int64_t k, int bits);

// codes: N*K codes, row-major, each < 2^bits. INVALID_ARGUMENT when the sizes
// disagree, a code does not fit, bits is outside 1..8, or K * bits is not a
// multiple of 32.
absl::StatusOr<std::vector<uint32_t>> PackCodes(
    const std::vector<uint8_t>& codes, int64_t n, int64_t k, int bits);

// Inverse of PackCodes: (N, K*bits/32) words -> N*K codes.
absl::StatusOr<std::vector<uint8_t>> UnpackCodes(
    const std::vector<uint32_t>& words, int64_t n, int64_t k, int bits);

}  // namespace hummingd
