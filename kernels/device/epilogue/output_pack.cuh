#pragma once

// fp32 results -> packed 16-bit output words (round to nearest even), two
// elements per u32 in memory order.

#include "arch/platform.cuh"
#include "numeric/float_encode.cuh"
#include "numeric/formats.cuh"

namespace hummingd::device {

// (2 * kWords) fp32 -> (kWords) u32 of fp16 or bf16 pairs.
template <ScalarType kOutput, int kWords>
HUMMINGD_HD void pack_output_pairs(const float (&r_values)[2 * kWords],
                                   u32 (&r_packed)[kWords]) {
  static_assert(kOutput == ScalarType::kFp16 || kOutput == ScalarType::kBf16,
                "outputs are fp16 or bf16");
  HUMMINGD_UNROLL
  for (int i = 0; i < kWords; ++i) {
    if constexpr (kOutput == ScalarType::kFp16) {
      r_packed[i] = encode_fp16x2(r_values[2 * i], r_values[2 * i + 1]);
    } else {
      r_packed[i] = encode_bf16x2(r_values[2 * i], r_values[2 * i + 1]);
    }
  }
}

}  // namespace hummingd::device
