// Is the warp-level mma.sync cheaper than wgmma per weight at 8 tokens?
// wgmma_probe.cu measured m64n8k16 at the same time per step as m64n16k16
// (14.5 SM cycles per 64 x 16 weights at any N <= 16): at 1-8 tokens half
// of the tensor core's work is padding, and with the decode's ALU issue
// added on top (v33) a step costs ~33 cycles. mma.sync m16n8k16 takes the
// weights as A in the same register layout as wgmma's A fragment (the
// decode is unchanged), the 8 tokens as B (ldmatrix from the same
// 128-byte-swizzled activation tile), and accumulates into the same
// per-thread fragment; if its n8 work costs less tensor time per weight,
// a decode kernel for M <= 8 can swap one instruction for another.
//
// Each warp runs kSteps k16 steps; per step it decodes (or keeps) the A
// fragments of kRows m16 tiles, loads the B fragments of kNTiles n8 token
// tiles (one ldmatrix.x4 per two steps per n8 tile, shared by the m16
// tiles), and issues kRows x kNTiles mma.sync. Reported: SM cycles per
// 1024 weights (at the maximum SM clock), the number to set beside the
// wgmma path's (bench/results/wgmma-probe-2026-11-30.txt: N = 8 fixed 14.5,
// with the decode 33.4 at 4 warpgroups per SM).
// Results: bench/results/mma-sync-probe-<date>.txt.
// Built and run on the GPU machine:
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
//     -I kernels/device bench/probes/mma_sync_probe.cu -o mma_sync_probe &&
//     ./mma_sync_probe
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "arch/ldmatrix.cuh"
#include "arch/mma_sync.cuh"
#include "probe_check.h"

namespace {

namespace hd = ::hummingd::device;

constexpr int kThreads = 256;  // eight warps, as the decode tiles
constexpr int kSteps = 4096;   // k16 steps per warp per launch
constexpr int kLaunches = 10;  // per timed graph
constexpr int kFixed = 0;
constexpr int kDecodeMode = 1;
constexpr const char* kModeNames[] = {"fixed", "decode"};

template <int kMode, int kRows, int kNTiles, int kBlocksPerSm>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    probe(float* sink, uint32_t seed) {
#if defined(HUMMINGD_HAS_MMA_M16N8K16)
  // The activation tile: 8 kNTiles token rows x 64 k (128 bytes each), the
  // 128-byte swizzle of the decode kernels (16-byte chunk c of row r at
  // chunk c ^ (r % 8)).
  __shared__ __align__(1024) uint8_t s_x[8 * kNTiles * 128];
  for (int i = threadIdx.x; i < 8 * kNTiles * 128 / 4; i += kThreads) {
    reinterpret_cast<uint32_t*>(s_x)[i] = 0x3c003c00u;  // fp16 1.0 pairs
  }
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const uint32_t s_base =
      static_cast<uint32_t>(__cvta_generic_to_shared(s_x));
  // ldmatrix.x4 row addresses: matrix i = k chunk i of the current 64-k
  // panel pair of steps (lanes 8i..8i+7 give tokens 0..7 of chunk i).
  const int row = lane & 7;
  const int chunk_in_pair = lane >> 3;  // 0..3: two steps x two k8 halves
  float acc[kRows][kNTiles][4];
  for (int r = 0; r < kRows; ++r)
    for (int n = 0; n < kNTiles; ++n)
      for (int e = 0; e < 4; ++e) acc[r][n][e] = 0.f;
  uint32_t words = seed ^ threadIdx.x;
  const uint32_t a_fixed[4] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u,
                               0x3c003c00u};
  uint32_t r_b[kNTiles][4];
  for (int step = 0; step < kSteps; ++step) {
    if ((step & 1) == 0) {
      // Two steps' B fragments: 32 k of the 64-k panel (step / 2) % 2.
      const int chunk = ((step >> 1) & 1) * 4 + chunk_in_pair;
      for (int n = 0; n < kNTiles; ++n) {
        const int token = n * 8 + row;
        hd::ldmatrix_x4(r_b[n], s_base + token * 128 +
                                    ((chunk ^ (token & 7)) << 4));
      }
    }
    for (int r = 0; r < kRows; ++r) {
      uint32_t r_a[4];
      if constexpr (kMode == kDecodeMode) {
        // Four operand pairs from one word, as the 4-bit decode: a LOP3
        // and a packed subtract per pair (the magic-number trick).
        words = words * 1664525u + 1013904223u;
        for (int p = 0; p < 4; ++p) {
          r_a[p] = ((words >> (4 * p)) & 0x000f000fu) | 0x64006400u;
          asm volatile("sub.rn.f16x2 %0, %0, %1;"
                       : "+r"(r_a[p])
                       : "r"(0x64086408u));
        }
      } else {
        for (int p = 0; p < 4; ++p) r_a[p] = a_fixed[p];
      }
      for (int n = 0; n < kNTiles; ++n) {
        const int half = (step & 1) * 2;
        const uint32_t b[2] = {r_b[n][half], r_b[n][half + 1]};
        hd::mma_m16n8k16_f16(acc[r][n], r_a, b);
      }
    }
  }
  float sum = 0.f;
  for (int r = 0; r < kRows; ++r)
    for (int n = 0; n < kNTiles; ++n)
      for (int e = 0; e < 4; ++e) sum += acc[r][n][e];
  if (sum == 1234.5f) sink[0] = sum;
#endif
}

template <int kMode, int kRows, int kNTiles, int kBlocksPerSm>
void run(cudaStream_t stream, float* sink, int sm_count, int clock_khz) {
  const int blocks = sm_count * kBlocksPerSm;
  auto launch = [&](int i) {
    probe<kMode, kRows, kNTiles, kBlocksPerSm>
        <<<blocks, kThreads, 0, stream>>>(sink, i);
  };
  const double us = median_graph_us(stream, kLaunches, 7, launch);
  // Weights per SM per launch: warps x steps x m16 tiles x 256.
  const double weights =
      double(kBlocksPerSm) * (kThreads / 32) * kSteps * kRows * 256.0;
  const double cycles = us * 1e-3 * clock_khz;
  const double flops = 2.0 * weights * 8 * kNTiles * sm_count;
  std::printf(
      "tokens %-2d %-6s %d m16 tiles/warp, %d blocks/SM  %8.2f us  %6.1f "
      "TFLOP/s  %6.2f SM cycles per 1024 weights\n",
      8 * kNTiles, kModeNames[kMode], kRows, kBlocksPerSm, us,
      flops / (us * 1e-6) / 1e12, cycles / (weights / 1024.0));
}

template <int kNTiles>
void run_all(cudaStream_t stream, float* sink, int sm_count, int clock_khz) {
  run<kFixed, 1, kNTiles, 2>(stream, sink, sm_count, clock_khz);
  run<kFixed, 2, kNTiles, 2>(stream, sink, sm_count, clock_khz);
  run<kFixed, 4, kNTiles, 2>(stream, sink, sm_count, clock_khz);
  run<kFixed, 2, kNTiles, 4>(stream, sink, sm_count, clock_khz);
  run<kDecodeMode, 1, kNTiles, 2>(stream, sink, sm_count, clock_khz);
  run<kDecodeMode, 2, kNTiles, 2>(stream, sink, sm_count, clock_khz);
  run<kDecodeMode, 4, kNTiles, 2>(stream, sink, sm_count, clock_khz);
  run<kDecodeMode, 2, kNTiles, 3>(stream, sink, sm_count, clock_khz);
  run<kDecodeMode, 2, kNTiles, 4>(stream, sink, sm_count, clock_khz);
}

}  // namespace

int main() {
  const auto [prop, sms, clock_khz, stream, sink] = open_probe_gpu();
  std::printf(
      "%s, %d SMs, %d MHz, %d k16 steps of mma.sync m16n8k16 per warp per "
      "launch\n",
      prop.name, sms, clock_khz / 1000, kSteps);
  run_all<1>(stream, sink, sms, clock_khz);
  run_all<2>(stream, sink, sms, clock_khz);
  return 0;
}
