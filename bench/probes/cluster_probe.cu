// Do thread-block clusters fit the decode kernels' one-wave grids? Cluster
// split-K (decode-notes v50, branch cluster-split-k) ran 1.4-1.5x slower
// than the global split-K on every layer, as if its clusters of 4 or 8
// blocks (two per SM, ~100 KB of shared memory each) ran in two waves. This
// probe asks the two questions that decide whether any cluster design
// (that one, or a ring whose activation tile is multicast to a cluster) can
// work on these grids:
//   1. what the occupancy API says: blocks per SM alone, and the most
//      clusters of each size that can be active at once
//      (cudaOccupancyMaxActiveClusters);
//   2. what the hardware does: a grid of the decode kernels' shape (256
//      blocks of 256 threads, the shared memory of their rings) whose every
//      block holds its SM for kHoldUs microseconds; one wave takes ~kHoldUs,
//      two take ~2 x kHoldUs.
// Cluster size 1 is the plain launch (the baseline). Results:
// bench/results/cluster-probe-<date>.txt. Built and run on the GPU machine:
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
//     bench/probes/cluster_probe.cu -o cluster_probe && ./cluster_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "probe_check.h"

namespace {

constexpr int kThreads = 256;
constexpr int kHoldUs = 40;

__device__ unsigned long long global_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// Touches its shared memory (so the allocation is real) and holds the SM
// for hold_ns; thread 0 of block 0 writes the sink.
__global__ void __launch_bounds__(kThreads)
    hold_kernel(unsigned hold_ns, float* sink) {
  extern __shared__ float s_buffer[];
  s_buffer[threadIdx.x] = static_cast<float>(threadIdx.x);
  __syncthreads();
  const unsigned long long start = global_ns();
  while (global_ns() - start < hold_ns) __nanosleep(1000);
  if (blockIdx.x == 0 && threadIdx.x == 0) *sink = s_buffer[kThreads - 1];
}

// Median over kRepeats launches of one held grid, in microseconds.
float held_grid_us(int blocks, int shared_bytes, int cluster,
                   cudaStream_t stream, float* sink) {
  cudaLaunchAttribute attribute{};
  const cudaLaunchConfig_t config = cluster_launch_config(
      blocks, kThreads, shared_bytes, cluster, stream, &attribute);
  return median_launch_us(stream, 5, [&] {
    CHECK(cudaLaunchKernelEx(&config, hold_kernel,
                             static_cast<unsigned>(kHoldUs * 1000), sink));
  });
}

}  // namespace

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  float* sink = nullptr;
  CHECK(cudaMalloc(&sink, sizeof(float)));
  CHECK(cudaFuncSetAttribute(
      hold_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  std::printf("%s, %d SMs; every block holds its SM %d us\n", prop.name,
              prop.multiProcessorCount, kHoldUs);
  std::printf("%8s %8s %8s %12s %14s %8s %10s %7s\n", "smem KB", "cluster",
              "blocks", "blocks/SM", "max clusters", "slots", "held us",
              "waves");
  // The decode rings: ~48 KB (four per SM), ~75 KB (three), ~100 KB (two,
  // k-split 8x32x1024 s3), 113 KB (two, the split-K tiles' padding).
  for (int shared_kb : {48, 75, 100, 113}) {
    const int shared_bytes = shared_kb * 1024;
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, hold_kernel, kThreads, shared_bytes));
    for (int cluster : {1, 2, 4, 8}) {
      for (int blocks : {256, 512}) {
        if (blocks > per_sm * prop.multiProcessorCount) continue;
        cudaLaunchAttribute attribute{};
        const cudaLaunchConfig_t config = cluster_launch_config(
            blocks, kThreads, shared_bytes, cluster, stream, &attribute);
        int clusters = 0;
        CHECK(cudaOccupancyMaxActiveClusters(&clusters, hold_kernel, &config));
        const float us =
            held_grid_us(blocks, shared_bytes, cluster, stream, sink);
        std::printf("%8d %8d %8d %12d %14d %8d %10.1f %7.2f\n", shared_kb,
                    cluster, blocks, per_sm, clusters, clusters * cluster, us,
                    us / kHoldUs);
      }
    }
  }
  CHECK(cudaFree(sink));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
