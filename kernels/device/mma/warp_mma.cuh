#pragma once

// One m16 x n8 x k16 tensor-core step per arch: m16n8k16 on sm_80+, two
// m16n8k8 on sm_75 (fp16 only: Turing has no bf16 tensor cores). The k16
// fragments split exactly: (a0, a1, b0) cover k 0..7, (a2, a3, b1) k 8..15.
// Device only.

#include "arch/mma_sync.cuh"
#include "arch/platform.cuh"
#include "numeric/formats.cuh"

namespace hummingd::device {

#if defined(__CUDA_ARCH__)

template <ScalarType kOperand>
HUMMINGD_DEVICE void mma_k16(float (&r_acc)[4], const u32 (&r_a)[4],
                             const u32 (&r_b)[2]) {
#if defined(HUMMINGD_HAS_MMA_M16N8K16)
  if constexpr (kOperand == ScalarType::kBf16) {
    mma_m16n8k16_bf16(r_acc, r_a, r_b);
  } else {
    mma_m16n8k16_f16(r_acc, r_a, r_b);
  }
#else
  static_assert(kOperand == ScalarType::kFp16,
                "bf16 operands need sm_80+ tensor cores");
  mma_m16n8k8_f16(r_acc, r_a[0], r_a[1], r_b[0]);
  mma_m16n8k8_f16(r_acc, r_a[2], r_a[3], r_b[1]);
#endif
}

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
