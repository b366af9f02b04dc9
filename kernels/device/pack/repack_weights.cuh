#pragma once

// GPU repack: checkpoint layout (kernels/reference/weight_packing.h) ->
// fragment order (pack/gemm_layout.cuh). One thread writes one lane's
// `kBits` words of one unit; byte-identical to RepackWeightsForGemm.

#include "arch/bit_ops.cuh"
#include "arch/platform.cuh"
#include "gemm/wna16_args.cuh"
#include "pack/gemm_layout.cuh"

namespace hummingd::device {

template <int kBits, i64 kN, i64 kK>
struct RepackPlan {
  static constexpr i64 kWordsPerRow = kK * kBits / 32;
  static constexpr i64 kUnitsK = kK / kGemmUnitCols;
  static constexpr i64 kLaneChunks = (kN / kGemmUnitRows) * kUnitsK * 32;
  static_assert(kN % kGemmUnitRows == 0 && kK % kGemmUnitCols == 0,
                "GEMM weights need N % 16 == 0 and K % 64 == 0");
};

// Lane chunk `chunk` (0 <= chunk < kLaneChunks): host-callable so host
// tests can run it against the CPU reference.
template <int kBits, i64 kN, i64 kK>
HUMMINGD_HD void repack_lane_chunk(const RepackArgs& args, i64 chunk) {
  using Plan = RepackPlan<kBits, kN, kK>;
  constexpr u32 kMask = (1u << kBits) - 1u;
  const int lane = static_cast<int>(chunk & 31);
  const i64 unit = chunk >> 5;
  const i64 n_unit = unit / Plan::kUnitsK;
  const i64 k_unit = unit % Plan::kUnitsK;
  u32 r_out[kBits];
  HUMMINGD_UNROLL
  for (int w = 0; w < kBits; ++w) r_out[w] = 0u;
  HUMMINGD_UNROLL
  for (int i = 0; i < kGemmCodesPerLane; ++i) {
    const i64 row = n_unit * kGemmUnitRows + gemm_unit_row(lane, i);
    const i64 col = k_unit * kGemmUnitCols + gemm_unit_col(lane, i);
    const i64 bit = col * kBits;
    const u32* g_row = args.checkpoint + row * Plan::kWordsPerRow;
    const i64 word = bit >> 5;
    const u32 lo = g_row[word];
    const u32 hi = word + 1 < Plan::kWordsPerRow ? g_row[word + 1] : 0u;
    const u32 code =
        funnel_shift_right(lo, hi, static_cast<u32>(bit & 31)) & kMask;
    const int out_bit = gemm_code_slot(kBits, i) * kBits;
    r_out[out_bit >> 5] |= code << (out_bit & 31);
    if ((out_bit & 31) + kBits > 32) {
      r_out[(out_bit >> 5) + 1] |= code >> (32 - (out_bit & 31));
    }
  }
  u32* g_dst = args.fragments + chunk * kBits;
  HUMMINGD_UNROLL
  for (int w = 0; w < kBits; ++w) g_dst[w] = r_out[w];
}

#if defined(__CUDA_ARCH__)
template <int kBits, i64 kN, i64 kK>
HUMMINGD_DEVICE void run_repack(const RepackArgs& args, i64 chunk) {
  if (chunk < RepackPlan<kBits, kN, kK>::kLaneChunks) {
    repack_lane_chunk<kBits, kN, kK>(args, chunk);
  }
}
#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
