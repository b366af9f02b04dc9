// How fast do the decode kernel's wgmmas run with no memory traffic at all?
// At 32 and 64 tokens the decode GEMM runs at about half the dense tensor
// rate the roofline assumes (bench/decode-notes.md v27), and neither L2 nor
// the accumulation chain explains it. This probe issues the kernel's own
// instruction (m64nNk16, A in registers, B from a 128-byte-swizzled shared
// tile, fp32 accumulators; arch/wgmma.cuh) in the kernel's own rhythm
// (wait_group 1 before each step), with the A fragments fixed, rewritten by
// one ALU operation each, or rebuilt by the 4-bit decode's operations
// (about 17 per step), and with more groups in flight or two steps per
// group; it reports TFLOP/s for N = 8..64 at 2 warpgroups x 1, 2 or 4 blocks
// per SM, and the cycles one warpgroup spends per step (at the maximum SM
// clock). Results: bench/results/wgmma-probe-2026-11-30.txt. Whether the
// decode overlaps wgmmas issued by other warps: split_roles_probe.cu.
// Built and run on the GPU machine:
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
//     -I kernels/device bench/probes/wgmma_probe.cu -o wgmma_probe &&
//     ./wgmma_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "arch/wgmma.cuh"
#include "probe_check.h"

namespace {

namespace hd = ::hummingd::device;

constexpr int kThreads = 256;  // two warpgroups, as the decode tiles
constexpr int kSteps = 4096;   // k16 steps per warpgroup per launch
constexpr int kLaunches = 10;  // per timed graph
// How a step gets its A fragments: the same registers every step, four
// register writes of one ALU operation each, or the 4-bit decode.
constexpr int kFixed = 0;
constexpr int kRewrite = 1;
constexpr int kDecodeMode = 2;
// The decode with an integer operation in its f16x2 subtract's place (the
// magic bias left in the operand, to be taken out after the MMA).
constexpr int kDecodeIntMode = 3;
constexpr const char* kModeNames[] = {"fixed", "rewrite", "decode", "dec-int"};

// kPending: wgmma groups left in flight while a step decodes (the kernel
// uses 1); kBatch: steps decoded before one fence and their wgmmas issued
// back to back in one group.
template <int kN, int kMode, int kBlocksPerSm, int kPending = 1, int kBatch = 1>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    probe(float* sink, uint32_t seed) {
#if defined(HUMMINGD_HAS_WGMMA)
  // B: kN rows x 64 k (one swizzle panel), values irrelevant to the timing.
  __shared__ __align__(1024) uint8_t s_b[64 * 128];
  for (int i = threadIdx.x; i < 64 * 128 / 4; i += kThreads) {
    reinterpret_cast<uint32_t*>(s_b)[i] = 0x3c003c00u;  // fp16 1.0 pairs
  }
  __syncthreads();
  const uint64_t desc = hd::wgmma_descriptor_k_major_sw128(
      static_cast<uint32_t>(__cvta_generic_to_shared(s_b)));
  float acc[kN / 2];
  for (int i = 0; i < kN / 2; ++i) acc[i] = 0.f;
  uint32_t words = seed ^ threadIdx.x;
  uint32_t a[4] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u};
  for (int step = 0; step < kSteps; step += kBatch) {
    hd::wgmma_wait<kPending>();
    uint32_t r_a[kBatch][4];
    for (int b = 0; b < kBatch; ++b) {
      for (int p = 0; p < 4; ++p) r_a[b][p] = a[p];
      if constexpr (kMode == kRewrite) {
        // The same register writes with one ALU operation each.
        words += 0x00010001u;
        for (int p = 0; p < 4; ++p) r_a[b][p] = words ^ (0x3c003c00u + p);
      }
      if constexpr (kMode == kDecodeMode || kMode == kDecodeIntMode) {
        // Four operand pairs from one word, as the 4-bit decode: a LOP3 and
        // a packed subtract per pair (the magic-number trick).
        words = words * 1664525u + 1013904223u;
        for (int p = 0; p < 4; ++p) {
          r_a[b][p] = ((words >> (4 * p)) & 0x000f000fu) | 0x64006400u;
          if constexpr (kMode == kDecodeIntMode) {
            asm volatile("xor.b32 %0, %0, %1;" : "+r"(r_a[b][p]) : "r"(step));
          } else {
            asm volatile("sub.rn.f16x2 %0, %0, %1;"
                         : "+r"(r_a[b][p])
                         : "r"(0x64086408u));
          }
        }
      }
    }
    hd::wgmma_fence();
    for (int b = 0; b < kBatch; ++b) {
      hd::wgmma_rs<kN, hd::ScalarType::kFp16>(acc, r_a[b],
                                              desc + (((step + b) & 3) * 2));
    }
    hd::wgmma_commit();
  }
  hd::wgmma_wait<0>();
  float sum = 0.f;
  for (int i = 0; i < kN / 2; ++i) sum += acc[i];
  if (sum == 1234.5f) sink[0] = sum;
#endif
}

template <int kN, int kMode, int kBlocksPerSm, int kPending = 1, int kBatch = 1>
void run(cudaStream_t stream, float* sink, int sm_count, int clock_khz) {
  const int blocks = sm_count * kBlocksPerSm;
  auto launch = [&](int i) {
    probe<kN, kMode, kBlocksPerSm, kPending, kBatch>
        <<<blocks, kThreads, 0, stream>>>(sink, i);
  };
  const double ms = median_graph_us(stream, kLaunches, 7, launch) / 1000.0;
  const double flops =
      2.0 * 64 * kN * 16 * kSteps * (kThreads / 128) * double(blocks);
  std::printf(
      "N=%-3d %-7s %d blocks/SM, pending %d, batch %d  %8.3f ms  %6.1f "
      "TFLOP/s  %6.1f cycles/step/warpgroup\n",
      kN, kModeNames[kMode], kBlocksPerSm, kPending, kBatch, ms,
      flops / (ms * 1e-3) / 1e12, ms * clock_khz / kSteps);
}

template <int kN>
void run_all(cudaStream_t stream, float* sink, int sm_count, int clock_khz) {
  run<kN, kFixed, 1>(stream, sink, sm_count, clock_khz);
  run<kN, kFixed, 2>(stream, sink, sm_count, clock_khz);
  run<kN, kDecodeMode, 2>(stream, sink, sm_count, clock_khz);
  run<kN, kDecodeIntMode, 2>(stream, sink, sm_count, clock_khz);
  // 64 tokens' 32 accumulators do not fit four blocks' register share
  // without ptxas serializing the wgmmas (C7512).
  if constexpr (kN < 64) {
    run<kN, kFixed, 4>(stream, sink, sm_count, clock_khz);
    run<kN, kDecodeMode, 4>(stream, sink, sm_count, clock_khz);
  }
  run<kN, kRewrite, 2>(stream, sink, sm_count, clock_khz);
  // Deeper overlap of the decode with the wgmmas in flight.
  run<kN, kDecodeMode, 2, 2, 1>(stream, sink, sm_count, clock_khz);
  run<kN, kDecodeMode, 2, 0, 2>(stream, sink, sm_count, clock_khz);
  run<kN, kDecodeMode, 2, 1, 2>(stream, sink, sm_count, clock_khz);
}

}  // namespace

int main() {
  const auto [prop, sms, clock_khz, stream, sink] = open_probe_gpu();
  std::printf(
      "%s, %d SMs, %d MHz, %d steps of m64nNk16 per warpgroup per launch\n",
      prop.name, sms, clock_khz / 1000, kSteps);
  run_all<8>(stream, sink, sms, clock_khz);
  run_all<16>(stream, sink, sms, clock_khz);
  run_all<32>(stream, sink, sms, clock_khz);
  run_all<64>(stream, sink, sms, clock_khz);
  return 0;
}
