#pragma once

// Warp-level tensor-core MMA instructions, fp32 accumulation. Device only.
//   m16n8k16 (fp16 or bf16 operands): sm_80+.
//   m16n8k8  (fp16 operands):         sm_75+ (Turing's only 16-bit shape).
// Fragment ownership (PTX ISA, "matrix fragments for mma.m16n8k16"), with
// g = lane / 4 and t = lane % 4:
//   A (16x16, row): a0 (g, 2t..2t+1)  a1 (g+8, 2t..)  a2 (g, 2t+8..)
//                   a3 (g+8, 2t+8..)
//   B (16x8, col):  b0 (k 2t..2t+1, n g)  b1 (k 2t+8..2t+9, n g)
//   C (16x8):       c0,c1 (g, 2t..2t+1)   c2,c3 (g+8, 2t..2t+1)
// m16n8k8 takes (a0, a1) and b0 of the same picture restricted to k < 8.

#include "arch/platform.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define HUMMINGD_HAS_MMA_M16N8K16 1
#endif

namespace hummingd::device {

#if defined(__CUDA_ARCH__)

#if defined(HUMMINGD_HAS_MMA_M16N8K16)
HUMMINGD_DEVICE void mma_m16n8k16_f16(float (&r_acc)[4], const u32 (&r_a)[4],
                                      const u32 (&r_b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(r_acc[0]), "+f"(r_acc[1]), "+f"(r_acc[2]), "+f"(r_acc[3])
      : "r"(r_a[0]), "r"(r_a[1]), "r"(r_a[2]), "r"(r_a[3]), "r"(r_b[0]),
        "r"(r_b[1]));
}

HUMMINGD_DEVICE void mma_m16n8k16_bf16(float (&r_acc)[4], const u32 (&r_a)[4],
                                       const u32 (&r_b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(r_acc[0]), "+f"(r_acc[1]), "+f"(r_acc[2]), "+f"(r_acc[3])
      : "r"(r_a[0]), "r"(r_a[1]), "r"(r_a[2]), "r"(r_a[3]), "r"(r_b[0]),
        "r"(r_b[1]));
}
#endif

HUMMINGD_DEVICE void mma_m16n8k8_f16(float (&r_acc)[4], u32 a0, u32 a1,
                                     u32 b0) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
      : "+f"(r_acc[0]), "+f"(r_acc[1]), "+f"(r_acc[2]), "+f"(r_acc[3])
      : "r"(a0), "r"(a1), "r"(b0));
}

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
