// Memory-side ceiling of the decode GEMM's weight stream on a Hopper GPU,
// without any decode or MMA: the grid, ring and copy pattern of the wgmma
// decode kernel (gemm/wgmma_gemm.cuh), consuming each stage with one
// shared load per thread. Answers "how fast can this access pattern move
// the bytes at all" before tuning the compute side. Built and run on the
// GPU machine:
//
//   nvcc -O3 -std=c++17 -arch=sm_90a bench/probes/stream_probe.cu \
//     -o stream_probe && ./stream_probe
//
// Prints one line per variant: µs per launch (median of 15 graph replays of
// 20 launches each, rotating over copies that exceed 3x L2) and TB/s.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "probe_check.h"

namespace {

constexpr int kThreads = 256;
constexpr int kRuns = 16;  // n-units of 16 rows per block (BN 256)
constexpr int kMaxStages = 12;

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

struct Params {
  const uint8_t* weights;  // one copy
  int k_units;             // units of 64 k per row of n-units
  int unit_bytes;          // 512 (4-bit) or 1024 (8-bit)
  int units_per_tile;      // BK / 64
  int splits;
  int stages;
  int mode;  // 0 bulk per run, 1 bulk contiguous tile, 2 cp.async 16 B
  float* sink;
};

__global__ void __launch_bounds__(kThreads, 2) probe(Params p) {
  extern __shared__ __align__(1024) uint8_t s_ring[];
  __shared__ __align__(8) uint64_t s_bar[kMaxStages];
  const int t = threadIdx.x;
  const int n_block = blockIdx.y;
  const int split = blockIdx.z;
  const int k_tiles = p.k_units / p.units_per_tile;
  const int tiles = k_tiles / p.splits;
  const int tile0 = split * tiles;
  const int run_bytes = p.units_per_tile * p.unit_bytes;
  const int stage_bytes = kRuns * run_bytes;
  if (t == 0) {
    for (int s = 0; s < p.stages; ++s) {
      asm volatile(
          "mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&s_bar[s])));
    }
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  auto issue = [&](int tile) {
    const int slot = tile % p.stages;
    uint8_t* dst = s_ring + slot * stage_bytes;
    const uint32_t bar = smem_addr(&s_bar[slot]);
    const int k_unit = (tile0 + tile) * p.units_per_tile;
    if (p.mode == 0) {
      if (t < kRuns) {
        if (t == 0)
          asm volatile(
              "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                  bar),
              "r"(stage_bytes));
        const uint8_t* src =
            p.weights +
            (static_cast<size_t>(n_block * kRuns + t) * p.k_units + k_unit) *
                p.unit_bytes;
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
            "[%0], [%1], %2, [%3];" ::"r"(smem_addr(dst + t * run_bytes)),
            "l"(src), "r"(run_bytes), "r"(bar)
            : "memory");
      }
    } else if (p.mode == 1) {
      if (t == 0) {
        asm volatile(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
            "r"(stage_bytes));
        // Tile-contiguous layout: [n_block][k_tile][16 KB].
        const uint8_t* src =
            p.weights +
            (static_cast<size_t>(n_block) * k_tiles + tile0 + tile) *
                stage_bytes;
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
            "[%0], [%1], %2, [%3];" ::"r"(smem_addr(dst)),
            "l"(src), "r"(stage_bytes), "r"(bar)
            : "memory");
      }
    } else {
      const int chunks = stage_bytes / 16;
      for (int c = t; c < chunks; c += kThreads) {
        const int run = c / (run_bytes / 16);
        const int off = (c % (run_bytes / 16)) * 16;
        const uint8_t* src =
            p.weights +
            (static_cast<size_t>(n_block * kRuns + run) * p.k_units + k_unit) *
                p.unit_bytes +
            off;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                         smem_addr(dst + run * run_bytes + off)),
                     "l"(src)
                     : "memory");
      }
      asm volatile("cp.async.commit_group;" ::: "memory");
    }
  };
  const int ahead = p.stages - 2;
  for (int i = 0; i < ahead && i < tiles; ++i) issue(i);
  float acc = 0.f;
  for (int i = 0; i < tiles; ++i) {
    const int slot = i % p.stages;
    if (p.mode == 2) {
      // Groups committed so far: min(tiles, ahead) + i; tile i's landed when
      // at most (ahead - 1) newer groups are pending.
      switch (ahead) {
        case 3:
          asm volatile("cp.async.wait_group 2;" ::: "memory");
          break;
        case 4:
          asm volatile("cp.async.wait_group 3;" ::: "memory");
          break;
        default:
          asm volatile("cp.async.wait_group 0;" ::: "memory");
          break;
      }
    } else {
      const uint32_t bar = smem_addr(&s_bar[slot]);
      const uint32_t parity = (i / p.stages) & 1;
      asm volatile(
          "{\n.reg .pred d;\nW_%=:\nmbarrier.try_wait.parity.shared::cta.b64 "
          "d, [%0], %1;\n@!d bra W_%=;\n}" ::"r"(bar),
          "r"(parity)
          : "memory");
    }
    __syncthreads();
    if (i + ahead < tiles)
      issue(i + ahead);
    else if (p.mode == 2)
      asm volatile("cp.async.commit_group;" ::: "memory");
    const uint32_t* s =
        reinterpret_cast<const uint32_t*>(s_ring + slot * stage_bytes);
    for (int w = t; w < stage_bytes / 4; w += kThreads * 8)
      acc += __uint_as_float(s[w] & 0x3FFFFFFF);
  }
  if (acc == 12345.f) p.sink[0] = acc;
}

// The plain read ceiling: every thread streams 16-byte loads.
__global__ void read_all(const uint4* src, size_t count, float* sink) {
  uint32_t acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcs(src + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) sink[0] = 1.f;
}

struct Variant {
  const char* name;
  int unit_bytes, units_per_tile, splits, stages, mode;
};

}  // namespace

int main() {
  const int n = 8192, k = 8192;
  const int n_blocks = n / 256;
  const int k_units = k / 64;
  const size_t max_bytes = size_t(n) * k;  // 8-bit
  const int copies = 6;
  uint8_t* buf;
  CHECK(cudaMalloc(&buf, max_bytes * copies));
  CHECK(cudaMemset(buf, 0x11, max_bytes * copies));
  float* sink;
  CHECK(cudaMalloc(&sink, 4));
  CHECK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             200 * 1024));
  const Variant variants[] = {
      {"w4 runs  BK128 s8 st5", 512, 2, 8, 5, 0},
      {"w4 tile  BK128 s8 st5", 512, 2, 8, 5, 1},
      {"w4 cpasy BK128 s8 st5", 512, 2, 8, 5, 2},
      {"w4 runs  BK128 s16 st5", 512, 2, 16, 5, 0},
      {"w4 runs  BK128 s8 st6", 512, 2, 8, 6, 0},
      {"w4 tile  BK128 s16 st5", 512, 2, 16, 5, 1},
      {"w4 runs  BK64 s8 st8", 512, 1, 8, 8, 0},
      {"w4 tile  BK64 s16 st8", 512, 1, 16, 8, 1},
      {"w8 runs  BK64 s8 st6", 1024, 1, 8, 6, 0},
      {"w8 tile  BK64 s8 st6", 1024, 1, 8, 6, 1},
      {"w8 cpasy BK64 s8 st6", 1024, 1, 8, 6, 2},
  };
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  // The first of 16 replays warms up; the median of the other 15.
  auto time_graph = [&](auto launch_one, int launches) {
    return median_graph_us(stream, launches, 15, launch_one);
  };
  for (int mb : {32, 64}) {
    const size_t bytes = size_t(mb) << 20;
    for (int blocks_per_sm : {2, 4, 8}) {
      const float us = time_graph(
          [&](int i) {
            read_all<<<132 * blocks_per_sm, 512, 0, stream>>>(
                reinterpret_cast<const uint4*>(buf + (i % copies) * max_bytes),
                bytes / 16, sink);
          },
          20);
      std::printf("read %2d MB, %d x 512 thr/SM   %8.2f us  %5.2f TB/s\n", mb,
                  blocks_per_sm, us, bytes / (us * 1e-6) / 1e12);
    }
  }
  for (const Variant& v : variants) {
    const size_t bytes = size_t(n) * k * (v.unit_bytes == 512 ? 4 : 8) / 8;
    const int stage_bytes = kRuns * v.units_per_tile * v.unit_bytes;
    const int smem = stage_bytes * v.stages;
    const float us = time_graph(
        [&](int i) {
          Params p{buf + (i % copies) * max_bytes,
                   k_units,
                   v.unit_bytes,
                   v.units_per_tile,
                   v.splits,
                   v.stages,
                   v.mode,
                   sink};
          probe<<<dim3(1, n_blocks, v.splits), kThreads, smem, stream>>>(p);
        },
        20);
    std::printf("%-26s %8.2f us  %5.2f TB/s\n", v.name, us,
                bytes / (us * 1e-6) / 1e12);
  }
  return 0;
}
