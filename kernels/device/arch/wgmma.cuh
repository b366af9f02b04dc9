#pragma once

// Warpgroup MMA (sm_90a): wgmma.mma_async with the A operand in registers
// and B in shared memory, fp32 accumulators, plus its fences and the shared
// memory matrix descriptor. Device only; every function must be reached by
// all 128 threads of a warpgroup together.
//
// Register A of m64nNk16: warp w of the warpgroup holds rows 16w..16w+15 in
// the layout of mma.m16n8k16's A (arch/mma_sync.cuh): a0 (g, 2t..2t+1),
// a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..), g = lane / 4,
// t = lane % 4. Accumulators: r_acc[4i + {0,1}] = (16w + g, 8i + 2t + {0,1}),
// r_acc[4i + {2,3}] = (16w + g + 8, 8i + 2t + {0,1}).
//
// B (K x N) is K-major in shared memory with the 128-byte swizzle: row n
// (one column of B) holds 64 consecutive k values (128 bytes), 8 rows form
// a 1024-byte atom, and 16-byte chunk c of row n sits at chunk c ^ (n % 8).
// The atom must be 1024-byte aligned; the next k16 slice of the same rows
// starts 32 bytes further (the hardware applies the swizzle to the sum).

#include "arch/platform.cuh"
#include "numeric/formats.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HUMMINGD_HAS_WGMMA 1
#endif

namespace hummingd::device {

inline constexpr int kWgmmaSwizzleRowBytes = 128;
inline constexpr int kWgmmaSwizzleAtomBytes = 1024;

// Shared-memory descriptor of a K-major, 128-byte-swizzled operand whose
// 8-row atoms are kWgmmaSwizzleAtomBytes apart: start address, leading byte
// offset (unused by this layout: 1), stride byte offset 1024, swizzle mode
// 1 (128 B), all addresses in 16-byte units.
HUMMINGD_HD u64 wgmma_descriptor_k_major_sw128(u32 s_address) {
  const u64 start = (s_address & 0x3FFFFu) >> 4;
  const u64 leading = 1;
  const u64 stride = kWgmmaSwizzleAtomBytes >> 4;
  return start | (leading << 16) | (stride << 32) | (u64{1} << 62);
}

#if defined(HUMMINGD_HAS_WGMMA)

// Orders this thread's earlier register writes (A fragments, accumulators)
// before the wgmma that follows.
HUMMINGD_DEVICE void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

HUMMINGD_DEVICE void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// Waits until at most kPending committed wgmma groups are in flight.
template <int kPending>
HUMMINGD_DEVICE void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving reads or writes of an accumulator across
// a wgmma wait (it does not know the asynchronous unit writes it).
HUMMINGD_DEVICE void wgmma_fence_operand(float& value) {
  asm volatile("" : "+f"(value)::"memory");
}

#define HUMMINGD_WGMMA_OUTPUTS_8 \
  "+f"(r_acc[0]), "+f"(r_acc[1]), "+f"(r_acc[2]), "+f"(r_acc[3])
#define HUMMINGD_WGMMA_OPERANDS_8 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, %8"

// Each size's outputs: the half before it, then its own accumulators.
#define HUMMINGD_WGMMA_OUTPUTS_16                                           \
  HUMMINGD_WGMMA_OUTPUTS_8, "+f"(r_acc[4]), "+f"(r_acc[5]), "+f"(r_acc[6]), \
      "+f"(r_acc[7])
#define HUMMINGD_WGMMA_OPERANDS_16 \
  "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12"

#define HUMMINGD_WGMMA_OUTPUTS_32                                             \
  HUMMINGD_WGMMA_OUTPUTS_16, "+f"(r_acc[8]), "+f"(r_acc[9]), "+f"(r_acc[10]), \
      "+f"(r_acc[11]), "+f"(r_acc[12]), "+f"(r_acc[13]), "+f"(r_acc[14]),     \
      "+f"(r_acc[15])
#define HUMMINGD_WGMMA_OPERANDS_32                                           \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, " \
  "{%16, %17, %18, %19}, %20"

#define HUMMINGD_WGMMA_OUTPUTS_64                                         \
  HUMMINGD_WGMMA_OUTPUTS_32, "+f"(r_acc[16]), "+f"(r_acc[17]),            \
      "+f"(r_acc[18]), "+f"(r_acc[19]), "+f"(r_acc[20]), "+f"(r_acc[21]), \
      "+f"(r_acc[22]), "+f"(r_acc[23]), "+f"(r_acc[24]), "+f"(r_acc[25]), \
      "+f"(r_acc[26]), "+f"(r_acc[27]), "+f"(r_acc[28]), "+f"(r_acc[29]), \
      "+f"(r_acc[30]), "+f"(r_acc[31])
#define HUMMINGD_WGMMA_OPERANDS_64                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "  \
  "%30, %31}, {%32, %33, %34, %35}, %36"

#define HUMMINGD_WGMMA_OUTPUTS_128                                        \
  HUMMINGD_WGMMA_OUTPUTS_64, "+f"(r_acc[32]), "+f"(r_acc[33]),            \
      "+f"(r_acc[34]), "+f"(r_acc[35]), "+f"(r_acc[36]), "+f"(r_acc[37]), \
      "+f"(r_acc[38]), "+f"(r_acc[39]), "+f"(r_acc[40]), "+f"(r_acc[41]), \
      "+f"(r_acc[42]), "+f"(r_acc[43]), "+f"(r_acc[44]), "+f"(r_acc[45]), \
      "+f"(r_acc[46]), "+f"(r_acc[47]), "+f"(r_acc[48]), "+f"(r_acc[49]), \
      "+f"(r_acc[50]), "+f"(r_acc[51]), "+f"(r_acc[52]), "+f"(r_acc[53]), \
      "+f"(r_acc[54]), "+f"(r_acc[55]), "+f"(r_acc[56]), "+f"(r_acc[57]), \
      "+f"(r_acc[58]), "+f"(r_acc[59]), "+f"(r_acc[60]), "+f"(r_acc[61]), \
      "+f"(r_acc[62]), "+f"(r_acc[63])
#define HUMMINGD_WGMMA_OPERANDS_128                                         \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "  \
  "%30, %31, "                                                              \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "  \
  "%46, %47, "                                                              \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "  \
  "%62, %63}, "                                                             \
  "{%64, %65, %66, %67}, %68"

#define HUMMINGD_WGMMA_OUTPUTS_256                                            \
  HUMMINGD_WGMMA_OUTPUTS_128, "+f"(r_acc[64]), "+f"(r_acc[65]),               \
      "+f"(r_acc[66]), "+f"(r_acc[67]), "+f"(r_acc[68]), "+f"(r_acc[69]),     \
      "+f"(r_acc[70]), "+f"(r_acc[71]), "+f"(r_acc[72]), "+f"(r_acc[73]),     \
      "+f"(r_acc[74]), "+f"(r_acc[75]), "+f"(r_acc[76]), "+f"(r_acc[77]),     \
      "+f"(r_acc[78]), "+f"(r_acc[79]), "+f"(r_acc[80]), "+f"(r_acc[81]),     \
      "+f"(r_acc[82]), "+f"(r_acc[83]), "+f"(r_acc[84]), "+f"(r_acc[85]),     \
      "+f"(r_acc[86]), "+f"(r_acc[87]), "+f"(r_acc[88]), "+f"(r_acc[89]),     \
      "+f"(r_acc[90]), "+f"(r_acc[91]), "+f"(r_acc[92]), "+f"(r_acc[93]),     \
      "+f"(r_acc[94]), "+f"(r_acc[95]), "+f"(r_acc[96]), "+f"(r_acc[97]),     \
      "+f"(r_acc[98]), "+f"(r_acc[99]), "+f"(r_acc[100]), "+f"(r_acc[101]),   \
      "+f"(r_acc[102]), "+f"(r_acc[103]), "+f"(r_acc[104]), "+f"(r_acc[105]), \
      "+f"(r_acc[106]), "+f"(r_acc[107]), "+f"(r_acc[108]), "+f"(r_acc[109]), \
      "+f"(r_acc[110]), "+f"(r_acc[111]), "+f"(r_acc[112]), "+f"(r_acc[113]), \
      "+f"(r_acc[114]), "+f"(r_acc[115]), "+f"(r_acc[116]), "+f"(r_acc[117]), \
      "+f"(r_acc[118]), "+f"(r_acc[119]), "+f"(r_acc[120]), "+f"(r_acc[121]), \
      "+f"(r_acc[122]), "+f"(r_acc[123]), "+f"(r_acc[124]), "+f"(r_acc[125]), \
      "+f"(r_acc[126]), "+f"(r_acc[127])
#define HUMMINGD_WGMMA_OPERANDS_256                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, "            \
  "%14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, "   \
  "%28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "   \
  "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "   \
  "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "   \
  "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, "   \
  "%84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, "   \
  "%98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "   \
  "%110, %111, "                                                             \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, " \
  "%124, %125, "                                                             \
  "%126, %127}, "                                                            \
  "{%128, %129, %130, %131}, %132"

// Operand number of the scale-d immediate (after accumulators, A, desc).
#define HUMMINGD_WGMMA_SCALE_D_8 "%9"
#define HUMMINGD_WGMMA_SCALE_D_16 "%13"
#define HUMMINGD_WGMMA_SCALE_D_32 "%21"
#define HUMMINGD_WGMMA_SCALE_D_64 "%37"
#define HUMMINGD_WGMMA_SCALE_D_128 "%69"
#define HUMMINGD_WGMMA_SCALE_D_256 "%133"

#define HUMMINGD_WGMMA_RS(N, TYPE)                                             \
  asm volatile("{\n.reg .pred p;\nsetp.ne.u32 p, " HUMMINGD_WGMMA_SCALE_D_##N  \
               ", 0;\n"                                                        \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE \
               " " HUMMINGD_WGMMA_OPERANDS_##N ", p, 1, 1, 0;\n}"              \
               : HUMMINGD_WGMMA_OUTPUTS_##N                                    \
               : "r"(r_a[0]), "r"(r_a[1]), "r"(r_a[2]), "r"(r_a[3]),           \
                 "l"(desc_b), "n"(kAccumulate ? 1 : 0))

// r_acc (64 x kN fp32, see above) = A (64 x 16, registers) . B (16 x kN,
// the descriptor's shared memory) + (kAccumulate ? r_acc : 0).
template <int kN, ScalarType kOperand, bool kAccumulate = true>
HUMMINGD_DEVICE void wgmma_rs(float (&r_acc)[kN / 2], const u32 (&r_a)[4],
                              u64 desc_b) {
  static_assert(kOperand == ScalarType::kFp16 || kOperand == ScalarType::kBf16,
                "16-bit operands");
  constexpr bool kBf16 = kOperand == ScalarType::kBf16;
  if constexpr (kN == 8) {
    if constexpr (kBf16)
      HUMMINGD_WGMMA_RS(8, "bf16");
    else
      HUMMINGD_WGMMA_RS(8, "f16");
  } else if constexpr (kN == 16) {
    if constexpr (kBf16)
      HUMMINGD_WGMMA_RS(16, "bf16");
    else
      HUMMINGD_WGMMA_RS(16, "f16");
  } else if constexpr (kN == 32) {
    if constexpr (kBf16)
      HUMMINGD_WGMMA_RS(32, "bf16");
    else
      HUMMINGD_WGMMA_RS(32, "f16");
  } else if constexpr (kN == 64) {
    if constexpr (kBf16)
      HUMMINGD_WGMMA_RS(64, "bf16");
    else
      HUMMINGD_WGMMA_RS(64, "f16");
  } else if constexpr (kN == 128) {
    if constexpr (kBf16)
      HUMMINGD_WGMMA_RS(128, "bf16");
    else
      HUMMINGD_WGMMA_RS(128, "f16");
  } else {
    static_assert(kN == 256, "token tiles of 8, 16, 32, 64, 128 or 256");
    if constexpr (kBf16)
      HUMMINGD_WGMMA_RS(256, "bf16");
    else
      HUMMINGD_WGMMA_RS(256, "f16");
  }
}

#undef HUMMINGD_WGMMA_RS

#endif  // HUMMINGD_HAS_WGMMA

}  // namespace hummingd::device
