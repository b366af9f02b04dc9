// Does re-reading the activations from L2 limit the decode GEMM at 16-64
// tokens? Every block of the wgmma decode kernel copies, per k-tile, its
// weight rows from HBM and the tile's kTokens activation rows from L2
// (the same rows for every n-block of a split), so L2 -> SM traffic is
// weights + n_blocks x activations. This probe runs the kernel's grid,
// ring and cp.async pattern (gemm/wgmma_gemm.cuh, BK 128, four stages, two
// blocks per SM) with no decode or MMA, for several token counts, and once
// with only every second n-block copying the activations (what sharing a
// tile between two blocks, e.g. a cluster multicast, would leave). Built
// and run on the GPU machine:
//
//   nvcc -O3 -std=c++17 -arch=sm_90a bench/probes/l2_probe.cu \
//     -o l2_probe && ./l2_probe
//
// Prints one line per variant: µs per launch (median of 15 graph replays of
// 20 launches each, rotating over weight copies that exceed 3x L2), the
// weights' TB/s, and L2 -> SM TB/s (weights + activation copies).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "probe_check.h"

namespace {

constexpr int kThreads = 256;
constexpr int kBlockK = 128;
constexpr int kUnitK = 64;  // one weight unit: 16 rows x 64 columns

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

struct Params {
  const uint8_t* weights;  // [n / 16][k / 64][unit_bytes]
  const uint8_t* x;        // [tokens][k] fp16
  int k;
  int unit_bytes;  // 512 (4-bit) or 1024 (8-bit)
  int runs;        // 16-row units per block (block_n / 16)
  int tokens;
  int share;  // only n-blocks with n_block % share == 0 copy activations
  int splits;
  int stages;
  float* sink;
};

__global__ void __launch_bounds__(kThreads, 2) probe(Params p) {
  extern __shared__ __align__(1024) uint8_t s_ring[];
  const int t = threadIdx.x;
  const int n_block = blockIdx.y;
  const int k_tiles = p.k / kBlockK;
  const int tiles = k_tiles / p.splits;
  const int tile0 = blockIdx.z * tiles;
  const int units_per_tile = kBlockK / kUnitK;
  const int run_bytes = units_per_tile * p.unit_bytes;
  const int w_bytes = p.runs * run_bytes;
  const int x_bytes = p.tokens * kBlockK * 2;
  const int stage_bytes = w_bytes + x_bytes;
  const bool copies_x = n_block % p.share == 0;
  const int k_units = p.k / kUnitK;
  auto issue = [&](int tile) {
    uint8_t* dst = s_ring + (tile % p.stages) * stage_bytes;
    const int k_unit = (tile0 + tile) * units_per_tile;
    for (int c = t; c < w_bytes / 16; c += kThreads) {
      const int run = c / (run_bytes / 16);
      const int off = (c % (run_bytes / 16)) * 16;
      const uint8_t* src =
          p.weights +
          (static_cast<size_t>(n_block * p.runs + run) * k_units + k_unit) *
              p.unit_bytes +
          off;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                       smem_addr(dst + run * run_bytes + off)),
                   "l"(src)
                   : "memory");
    }
    if (copies_x) {
      // 16 chunks of 16 bytes per token row of the tile.
      for (int c = t; c < x_bytes / 16; c += kThreads) {
        const int row = c / 16;
        const uint8_t* src =
            p.x +
            (static_cast<size_t>(row) * p.k + (tile0 + tile) * kBlockK) * 2 +
            (c % 16) * 16;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                         smem_addr(dst + w_bytes + c * 16)),
                     "l"(src)
                     : "memory");
      }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  const int ahead = p.stages - 2;  // as the decode kernel: 2 with 4 stages
  for (int i = 0; i < ahead && i < tiles; ++i) issue(i);
  float acc = 0.f;
  for (int i = 0; i < tiles; ++i) {
    asm volatile("cp.async.wait_group 1;" ::: "memory");
    __syncthreads();
    if (i + ahead < tiles) {
      issue(i + ahead);
    } else {
      asm volatile("cp.async.commit_group;" ::: "memory");
    }
    const uint32_t* s = reinterpret_cast<const uint32_t*>(
        s_ring + (i % p.stages) * stage_bytes);
    for (int w = t; w < stage_bytes / 4; w += kThreads * 8)
      acc += __uint_as_float(s[w] & 0x3FFFFFFF);
  }
  if (acc == 12345.f) p.sink[0] = acc;
}

struct Variant {
  int bits, block_n, tokens, share, splits;
};

}  // namespace

int main() {
  const int n = 8192, k = 8192;
  const size_t max_bytes = size_t(n) * k;  // 8-bit weights
  const int copies = 6;
  uint8_t* buf;
  CHECK(cudaMalloc(&buf, max_bytes * copies));
  CHECK(cudaMemset(buf, 0x11, max_bytes * copies));
  uint8_t* x;
  const size_t x_bytes = size_t(64) * k * 2;
  CHECK(cudaMalloc(&x, x_bytes * copies));
  CHECK(cudaMemset(x, 0x22, x_bytes * copies));
  float* sink;
  CHECK(cudaMalloc(&sink, 4));
  // The largest variant: 8-bit, 64 rows, 4 stages of 32 KB.
  CHECK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             160 * 1024));
  // The planned 16- / 32- / 64-token tiles of 8192² (128 rows, 4 splits),
  // each with every n-block copying activations and with half of them.
  const Variant variants[] = {
      {4, 128, 0, 1, 4},  {4, 128, 8, 1, 4},  {4, 128, 16, 1, 4},
      {4, 128, 32, 1, 4}, {4, 128, 32, 2, 4}, {4, 128, 64, 1, 4},
      {4, 128, 64, 2, 4}, {4, 256, 32, 1, 8}, {8, 128, 0, 1, 4},
      {8, 128, 32, 1, 4}, {8, 128, 32, 2, 4}, {8, 128, 64, 1, 4},
      {8, 128, 64, 2, 4},
  };
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  // The first of 16 replays warms up; the median of the other 15.
  auto time_graph = [&](auto launch_one, int launches) {
    return median_graph_us(stream, launches, 15, launch_one);
  };
  std::printf(
      "bits block_n tokens share splits        us  weights TB/s  L2->SM "
      "TB/s\n");
  for (const Variant& v : variants) {
    const int unit_bytes = v.bits == 4 ? 512 : 1024;
    const size_t w_bytes = size_t(n) * k * v.bits / 8;
    const int n_blocks = n / v.block_n;
    const int stages = 4;
    const int stage_bytes = (v.block_n / 16) * (kBlockK / kUnitK) * unit_bytes +
                            v.tokens * kBlockK * 2;
    const size_t x_reads = size_t(n_blocks / v.share) * v.tokens * k * 2;
    const float us = time_graph(
        [&](int i) {
          Params p{buf + (i % copies) * max_bytes,
                   x + (i % copies) * x_bytes,
                   k,
                   unit_bytes,
                   v.block_n / 16,
                   v.tokens,
                   v.share,
                   v.splits,
                   stages,
                   sink};
          probe<<<dim3(1, n_blocks, v.splits), kThreads, stage_bytes * stages,
                  stream>>>(p);
          CHECK(cudaGetLastError());
        },
        20);
    std::printf("%4d %7d %6d %5d %6d  %8.2f  %12.2f  %11.2f\n", v.bits,
                v.block_n, v.tokens, v.share, v.splits, us,
                w_bytes / (us * 1e-6) / 1e12,
                (w_bytes + x_reads) / (us * 1e-6) / 1e12);
  }
  return 0;
}
