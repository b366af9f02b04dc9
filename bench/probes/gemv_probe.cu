// Could CUDA cores beat the tensor cores at 1-4 tokens? At 8 tokens and
// below the decode kernel's 64 x 16 wgmma step costs ~14 SM cycles of tensor
// time (a floor for N <= 16) plus the decode's issue (~19 cycles; the two add:
// split_roles_probe.cu), ~33 cycles per 1024 weights, which for 4-bit weights
// is as long as their HBM time (bench/decode-notes.md v34). A GEMV on CUDA
// cores pays no tensor time: per 8 weights of a row one packed word, the
// 4-bit decode into four f16x2 pairs (a shift, four LOP3, four f16x2
// ops), one f16x2 FMA per pair and token, and a flush of the f16x2 partial
// sums into fp32 every kFlush steps (f16 sums of more than a few products
// would lose the 1e-3 the issue asks for). This probe runs that loop with
// no global memory traffic: packed words from shared memory (one 16-byte
// load covers four rows' words), activation pairs from shared memory once
// per step for all kRows rows of the thread, and reports SM cycles per 1024
// weights, to hold against the tensor path's ~33 (wgmma_probe.cu N = 8 with
// the decode: 133.5 cycles per step per block at 4 warpgroups per SM).
// Built and run on the GPU machine:
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
//     bench/probes/gemv_probe.cu -o gemv_probe && ./gemv_probe
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "probe_check.h"

namespace {

constexpr int kThreads = 256;
constexpr int kSteps = 2048;   // k steps of 8 weights per thread and row
constexpr int kLaunches = 10;  // per timed graph
constexpr int kRows = 8;       // rows per thread (activations reused)

__device__ __forceinline__ uint32_t hfma2(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm volatile("fma.rn.f16x2 %0, %1, %2, %3;"
               : "=r"(d)
               : "r"(a), "r"(b), "r"(c));
  return d;
}

template <int kTokens, int kFlush, int kBlocksPerSm>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    gemv(float* sink, uint32_t seed) {
  __shared__ uint4 s_w[kThreads * 4];  // 16 KB of packed 4-bit words
  __shared__ uint4 s_x[64 * kTokens];  // activation pairs, 4 per uint4
  for (int i = threadIdx.x; i < kThreads * 4; i += kThreads) {
    const uint32_t h = (seed + i) * 2654435761u;
    s_w[i] = make_uint4(h, h ^ 0x5bd1e995u, h * 3u, h + 0x9e3779b9u);
  }
  for (int i = threadIdx.x; i < 64 * kTokens; i += kThreads) {
    s_x[i] = make_uint4(0x3c003c01u, 0x3bff3c02u, 0x3c003bfeu, 0x3c013c00u);
  }
  __syncthreads();
  float acc[kRows][kTokens][2];
  for (int r = 0; r < kRows; ++r)
    for (int m = 0; m < kTokens; ++m) acc[r][m][0] = acc[r][m][1] = 0.f;
  uint32_t part[kRows][kTokens];
  for (int r = 0; r < kRows; ++r)
    for (int m = 0; m < kTokens; ++m) part[r][m] = 0;
  const uint32_t kMagic = 0x64006400u;
  const uint32_t kSixteenth = 0x2c002c00u;  // 1/16 in both halves
  const uint32_t kMinus72 = 0xd480d480u;    // -72
  const uint32_t kMinus1032 = 0xe408e408u;  // -1032
  const uint32_t kOne = 0x3c003c00u;
  for (int step = 0; step < kSteps; ++step) {
    // The step's activation pairs of every token (shared by the rows).
    uint4 x[kTokens];
    for (int m = 0; m < kTokens; ++m) {
      x[m] = s_x[(step & 63) * kTokens + m];
    }
    // Four rows' packed words per 16-byte load.
    for (int q = 0; q < kRows / 4; ++q) {
      const uint4 w4 =
          s_w[(threadIdx.x + (step + q) * 37) & (kThreads * 4 - 1)];
      const uint32_t words[4] = {w4.x, w4.y, w4.z, w4.w};
      for (int j = 0; j < 4; ++j) {
        const int r = q * 4 + j;
        const uint32_t w = words[j];
        const uint32_t hi = w >> 8;
        // Interleaved nibbles: LOP3 lifts a pair to 1024 + q or 1024 + 16 q.
        uint32_t p0 = (w & 0x000f000fu) | kMagic;
        uint32_t p1 = (w & 0x00f000f0u) | kMagic;
        uint32_t p2 = (hi & 0x000f000fu) | kMagic;
        uint32_t p3 = (hi & 0x00f000f0u) | kMagic;
        p0 = hfma2(p0, kOne, kMinus1032);
        p1 = hfma2(p1, kSixteenth, kMinus72);
        p2 = hfma2(p2, kOne, kMinus1032);
        p3 = hfma2(p3, kSixteenth, kMinus72);
        for (int m = 0; m < kTokens; ++m) {
          uint32_t s = part[r][m];
          s = hfma2(p0, x[m].x, s);
          s = hfma2(p1, x[m].y, s);
          s = hfma2(p2, x[m].z, s);
          s = hfma2(p3, x[m].w, s);
          part[r][m] = s;
        }
      }
    }
    if ((step + 1) % kFlush == 0) {
      for (int r = 0; r < kRows; ++r) {
        for (int m = 0; m < kTokens; ++m) {
          const __half2 h = *reinterpret_cast<const __half2*>(&part[r][m]);
          const float2 f = __half22float2(h);
          acc[r][m][0] += f.x;
          acc[r][m][1] += f.y;
          part[r][m] = 0;
        }
      }
    }
  }
  float sum = 0.f;
  for (int r = 0; r < kRows; ++r)
    for (int m = 0; m < kTokens; ++m) sum += acc[r][m][0] + acc[r][m][1];
  if (sum == 1234.5f) sink[0] = sum;
}

template <int kTokens, int kFlush, int kBlocksPerSm>
void run(cudaStream_t stream, float* sink, int sm_count, int clock_khz) {
  const int blocks = sm_count * kBlocksPerSm;
  auto launch = [&](int i) {
    gemv<kTokens, kFlush, kBlocksPerSm>
        <<<blocks, kThreads, 0, stream>>>(sink, i);
  };
  const double us = median_graph_us(stream, kLaunches, 7, launch);
  // Weights per SM per launch.
  const double weights = double(kBlocksPerSm) * kThreads * kRows * kSteps * 8.0;
  const double cycles = us * 1e-6 * clock_khz * 1e3;
  std::printf(
      "tokens %d, flush every %d steps, %d blocks/SM: %8.2f us  %6.2f SM "
      "cycles per 1024 weights\n",
      kTokens, kFlush, kBlocksPerSm, us, cycles / (weights / 1024.0));
}

}  // namespace

int main() {
  const auto [prop, sms, clock_khz, stream, sink] = open_probe_gpu();
  std::printf(
      "%s, %d SMs, %d MHz, %d rows x %d steps of 8 weights per thread\n",
      prop.name, sms, clock_khz / 1000, kRows, kSteps);
  run<1, 1, 2>(stream, sink, sms, clock_khz);
  run<1, 1, 3>(stream, sink, sms, clock_khz);
  run<1, 2, 2>(stream, sink, sms, clock_khz);
  run<2, 1, 2>(stream, sink, sms, clock_khz);
  run<2, 2, 2>(stream, sink, sms, clock_khz);
  run<4, 1, 2>(stream, sink, sms, clock_khz);
  run<4, 2, 1>(stream, sink, sms, clock_khz);
  return 0;
}
