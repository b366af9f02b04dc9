// Would 16-bit activations split into two int8 halves make the 16- to
// 64-token k-loop cheaper? On Hopper a register-A wgmma and the decode's ALU
// work add (decode-notes v30, v33), and the 4-bit decode into f16x2 costs
// about 9 operations per packed word (a LOP3 and a packed subtract per
// register, a shift). Into unsigned bytes it costs 3 (two LOP3, a shift),
// and an integer wgmma (m64nNk32, u8 x s8, s32 accumulators) at twice the
// f16 rate runs the two activation halves (a = s (128 hi + lo), per token
// and scale group) in the f16 MMA's tensor time. What it adds: a fold per
// scale group that turns the two s32 accumulator sets into fp32 (exactly,
// by the magic-number trick, within 2^22) and applies the weight and
// activation scales, and a pass that splits the activations (not timed
// here: once per call, not per block).
//
// Per scale group of 128 k and warpgroup, the probe times
//   f16:   8 steps of (decode one word into 4 f16x2 registers, wgmma
//          m64nNk16 into fp32 partials), then the kernel's deferred-scale fold
//          (wait for the group, one FFMA per accumulator);
//   int8:  4 steps of (decode two words into 4 u8x4 registers, wgmma
//          m64nNk32 hi and lo into s32 partials), then the fold (wait, per
//          accumulator: 128 hi + lo + the token's zero-point term, the
//          magic-number conversion, scale and accumulate);
// both with the A fragments rebuilt each step from a fresh word, 2
// warpgroups x 2 blocks per SM, and prints TFLOP/s (f16-equivalent) and
// cycles per k16 of one warpgroup at the maximum SM clock.
// Results: bench/results/int8-split-probe-<date>.txt.
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
//     -I kernels/device bench/probes/int8_split_probe.cu -o int8_split_probe &&
//     ./int8_split_probe
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "arch/wgmma.cuh"
#include "probe_check.h"

namespace {

namespace hd = ::hummingd::device;

constexpr int kThreads = 256;  // two warpgroups, as the decode tiles
constexpr int kGroups = 512;   // scale groups of 128 k per warpgroup
constexpr int kLaunches = 10;  // per timed graph
constexpr int kBlocksPerSm = 2;

constexpr int kF16 = 0;
constexpr int kInt8Split = 1;
constexpr const char* kModeNames[] = {"f16", "int8-split"};

#if defined(HUMMINGD_HAS_WGMMA)

#define PROBE_OUT_8 "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
#define PROBE_OUT_16 PROBE_OUT_8, "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
#define PROBE_OUT_32                                                           \
  PROBE_OUT_16, "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), \
      "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
#define PROBE_OUT_64                                                   \
  PROBE_OUT_32, "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]),    \
      "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), \
      "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), \
      "+r"(d[30]), "+r"(d[31])
#define PROBE_ARGS_16 \
  "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12"
#define PROBE_SCALE_D_16 "%13"
#define PROBE_ARGS_32                                                        \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, " \
  "{%16, %17, %18, %19}, %20"
#define PROBE_SCALE_D_32 "%21"
#define PROBE_ARGS_64                                                       \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "  \
  "%30, %31}, {%32, %33, %34, %35}, %36"
#define PROBE_SCALE_D_64 "%37"

#define PROBE_WGMMA_U8S8(N)                                               \
  asm volatile("{\n.reg .pred p;\nsetp.ne.u32 p, " PROBE_SCALE_D_##N      \
               ", 0;\n"                                                   \
               "wgmma.mma_async.sync.aligned.m64n" #N                     \
               "k32.s32.u8.s8 " PROBE_ARGS_##N ", p;\n}"                  \
               : PROBE_OUT_##N                                            \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), \
                 "n"(kAccumulate ? 1 : 0))

// d (64 x kN s32) = A (64 x 32 unsigned bytes, registers) . B (32 x kN
// signed bytes, the descriptor's shared memory) + (kAccumulate ? d : 0).
template <int kN, bool kAccumulate>
__device__ __forceinline__ void wgmma_u8s8(int32_t (&d)[kN / 2],
                                           const uint32_t (&a)[4],
                                           uint64_t desc_b) {
  if constexpr (kN == 16) {
    PROBE_WGMMA_U8S8(16);
  } else if constexpr (kN == 32) {
    PROBE_WGMMA_U8S8(32);
  } else {
    static_assert(kN == 64, "16, 32 or 64 tokens");
    PROBE_WGMMA_U8S8(64);
  }
}

#endif  // HUMMINGD_HAS_WGMMA

__device__ __forceinline__ uint32_t next_word(uint32_t word) {
  return word * 1664525u + 1013904223u;
}

template <int kN, int kMode>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    probe(float* sink, uint32_t seed) {
#if defined(HUMMINGD_HAS_WGMMA)
  // Two B panels (the int8 mode's hi and lo halves; the f16 mode reads the
  // first): kN rows x 128 bytes, values irrelevant to the timing.
  __shared__ __align__(1024) uint8_t s_b[2][64 * 128];
  __shared__ float s_scales[64];         // per group, as the kernel's chunk
  __shared__ int32_t s_token_terms[64];  // the int8 mode's zero-point terms
  for (int i = threadIdx.x; i < 2 * 64 * 128 / 4; i += kThreads) {
    reinterpret_cast<uint32_t*>(s_b)[i] =
        kMode == kF16 ? 0x3c003c00u : 0x01010101u;
  }
  if (threadIdx.x < 64) {
    s_scales[threadIdx.x] = 1.0f / float(threadIdx.x + seed % 7 + 1);
    s_token_terms[threadIdx.x] = int32_t(threadIdx.x) * -8;
  }
  __syncthreads();
  const uint64_t desc_hi = hd::wgmma_descriptor_k_major_sw128(
      static_cast<uint32_t>(__cvta_generic_to_shared(s_b[0])));
  const uint64_t desc_lo = hd::wgmma_descriptor_k_major_sw128(
      static_cast<uint32_t>(__cvta_generic_to_shared(s_b[1])));
  const int lane_token = (threadIdx.x & 3) * 2;  // the accumulator columns
  float acc[kN / 2];
  for (int i = 0; i < kN / 2; ++i) acc[i] = 0.f;
  uint32_t word = seed ^ threadIdx.x;
  for (int group = 0; group < kGroups; ++group) {
    const float scale = s_scales[group & 63];
    if constexpr (kMode == kF16) {
      float partial[kN / 2];
      for (int step = 0; step < 8; ++step) {
        hd::wgmma_wait<1>();
        word = next_word(word);
        uint32_t r_a[4];
        for (int p = 0; p < 4; ++p) {
          r_a[p] = ((word >> (4 * p)) & 0x000f000fu) | 0x64006400u;
          asm volatile("sub.rn.f16x2 %0, %0, %1;"
                       : "+r"(r_a[p])
                       : "r"(0x64086408u));
        }
        hd::wgmma_fence();
        const uint64_t desc = desc_hi + ((step & 3) * 2);
        if (step == 0) {
          hd::wgmma_rs<kN, hd::ScalarType::kFp16, false>(partial, r_a, desc);
        } else {
          hd::wgmma_rs<kN, hd::ScalarType::kFp16, true>(partial, r_a, desc);
        }
        hd::wgmma_commit();
      }
      hd::wgmma_wait<0>();
      for (int i = 0; i < kN / 2; ++i) {
        hd::wgmma_fence_operand(partial[i]);
        acc[i] = fmaf(scale, partial[i], acc[i]);
      }
    } else {
      int32_t hi[kN / 2];
      int32_t lo[kN / 2];
      for (int step = 0; step < 4; ++step) {
        hd::wgmma_wait<1>();
        uint32_t r_a[4];
        for (int w = 0; w < 2; ++w) {
          word = next_word(word);
          r_a[2 * w] = word & 0x0f0f0f0fu;
          r_a[2 * w + 1] = (word >> 4) & 0x0f0f0f0fu;
        }
        hd::wgmma_fence();
        const int offset = (step & 3) * 2;
        if (step == 0) {
          wgmma_u8s8<kN, false>(hi, r_a, desc_hi + offset);
          wgmma_u8s8<kN, false>(lo, r_a, desc_lo + offset);
        } else {
          wgmma_u8s8<kN, true>(hi, r_a, desc_hi + offset);
          wgmma_u8s8<kN, true>(lo, r_a, desc_lo + offset);
        }
        hd::wgmma_commit();
      }
      hd::wgmma_wait<0>();
      // The group's sum in integers: 128 hi + lo + (the magic 0x4B400000 and
      // the token's zero-point term, one addend), then a float whose value
      // is 12582912 + the sum while |sum| < 2^22.
      for (int i = 0; i < kN / 2; ++i) {
        asm volatile("" : "+r"(hi[i]), "+r"(lo[i])::"memory");
        const int token = (i / 4) * 8 + lane_token + (i & 1);
        const int32_t addend = s_token_terms[token & 63] + 0x4B400000;
        const int32_t biased = hi[i] * 128 + lo[i] + addend;
        const float value = __int_as_float(biased) - 12582912.0f;
        acc[i] = fmaf(scale, value, acc[i]);
      }
    }
  }
  hd::wgmma_wait<0>();
  float sum = 0.f;
  for (int i = 0; i < kN / 2; ++i) sum += acc[i];
  if (sum == 1234.5f) sink[0] = sum;
#endif
}

template <int kN, int kMode>
void run(cudaStream_t stream, float* sink, int sm_count, int clock_khz) {
  const int blocks = sm_count * kBlocksPerSm;
  auto launch = [&](int i) {
    probe<kN, kMode><<<blocks, kThreads, 0, stream>>>(sink, i);
  };
  const double ms = median_graph_us(stream, kLaunches, 7, launch) / 1000.0;
  const double k16_steps = 8.0 * kGroups;  // per warpgroup
  const double flops =
      2.0 * 64 * kN * 16 * k16_steps * (kThreads / 128) * double(blocks);
  std::printf(
      "N=%-3d %-10s %d blocks/SM  %8.3f ms  %6.1f TFLOP/s (f16-equivalent)  "
      "%6.1f cycles/k16/warpgroup\n",
      kN, kModeNames[kMode], kBlocksPerSm, ms, flops / (ms * 1e-3) / 1e12,
      ms * clock_khz / k16_steps);
}

template <int kN>
void run_both(cudaStream_t stream, float* sink, int sm_count, int clock_khz) {
  run<kN, kF16>(stream, sink, sm_count, clock_khz);
  run<kN, kInt8Split>(stream, sink, sm_count, clock_khz);
}

}  // namespace

int main() {
  const auto [prop, sms, clock_khz, stream, sink] = open_probe_gpu();
  std::printf("%s, %d SMs, %d MHz, %d scale groups of 128 k per warpgroup\n",
              prop.name, sms, clock_khz / 1000, kGroups);
  run_both<16>(stream, sink, sms, clock_khz);
  run_both<32>(stream, sink, sms, clock_khz);
  run_both<64>(stream, sink, sms, clock_khz);
  return 0;
}
