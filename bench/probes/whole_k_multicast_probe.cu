// Does cluster multicast deliver a block's whole activation tile faster
// than every block reading it from L2 on its own? The small layers' 16-token
// rows grow ~0.39 µs per 56 KB of activations a block reads (4096² M = 9
// against 16, bench/decode-notes.md v106), and the 4096² 16-token tile holds
// all of K in its ring, so its activations could arrive once per pair of
// blocks with no stage to refill: no cross-block release per stage, which is
// what a streaming ring needs and what made multicast 2-3x slower in
// multicast_probe.cu (v56). This probe copies, once per launch, each block's
// own weights (HBM: the launches rotate over enough copies to exceed the L2)
// and the activation tile every block reads (L2-resident), onto one
// mbarrier, then exits:
//   none      - weights only (the floor);
//   cp.async  - every thread copies 16-byte pieces of the activations;
//   bulk      - the activations' token rows by cp.async.bulk, one per thread
//               of the first warp;
//   multicast - blocks in clusters of two; each issues half of the token
//               rows with .multicast::cluster into both blocks.
// Weights go by cp.async.bulk in every path. It prints the time per launch
// (median graph replay of back-to-back launches, as the decode bench).
// Results: bench/results/whole-k-multicast-probe-<date>.txt. Built and run on
// the GPU machine:
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
//     -I kernels/device bench/probes/whole_k_multicast_probe.cu \
//     -o whole_k_multicast_probe && ./whole_k_multicast_probe
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "arch/async_copy.cuh"
#include "arch/bulk_copy.cuh"
#include "probe_check.h"
#include "probe_cluster_copy.cuh"

namespace {

constexpr int kThreads = 512;
constexpr int kWeightCopies = 16;  // launches rotate over them: > 60 MB L2
constexpr int kWeightChunkBytes = 8192;

enum class Path { kNone, kCpAsync, kBulk, kMulticast };

namespace hd = ::hummingd::device;

struct ProbeArgs {
  const uint8_t* act;      // tokens rows of row_bytes, read by every block
  const uint8_t* weights;  // this launch's copy: blocks' tiles back to back
  int tokens;
  int row_bytes;
  int w_bytes;  // per block
  float* sink;
};

template <Path kPath>
__global__ void __launch_bounds__(kThreads, 1)
    whole_k_kernel(ProbeArgs args) {
#if defined(HUMMINGD_HAS_BULK_COPY)  // the device pass for sm_90+
  extern __shared__ __align__(1024) uint8_t s_tile[];
  __shared__ __align__(8) uint64_t s_full;
  const int thread = threadIdx.x;
  const int act_bytes = kPath == Path::kNone ? 0 : args.tokens * args.row_bytes;
  const uint32_t tile = smem_address(s_tile);
  const uint32_t full = smem_address(&s_full);
  if (thread == 0) {
    hd::mbarrier_init(full, 1);
    hd::mbarrier_init_fence();
  }
  // The peer's multicast completes bytes on this block's barrier: it must be
  // initialized cluster-wide first.
  if constexpr (kPath == Path::kMulticast) {
    cluster_sync();
  } else {
    __syncthreads();
  }
  const uint8_t* w_block =
      args.weights + static_cast<size_t>(blockIdx.x) * args.w_bytes;
  const uint32_t w_dst = tile + act_bytes;
  if (thread == 0) {
    // Bytes this block's barrier receives: its weights and, on the copy
    // engine's paths, every activation row (half of them from the peer).
    const int tx_bytes =
        args.w_bytes + (kPath == Path::kBulk || kPath == Path::kMulticast
                            ? act_bytes
                            : 0);
    hd::mbarrier_arrive_expect_tx(full, tx_bytes);
  }
  __syncwarp();
  if (thread < 32) {
    for (int o = thread * kWeightChunkBytes; o < args.w_bytes;
         o += 32 * kWeightChunkBytes) {
      bulk_copy(w_dst + o, w_block + o, kWeightChunkBytes, full);
    }
    if constexpr (kPath == Path::kBulk) {
      for (int row = thread; row < args.tokens; row += 32) {
        bulk_copy(tile + row * args.row_bytes, args.act + row * args.row_bytes,
                  args.row_bytes, full);
      }
    } else if constexpr (kPath == Path::kMulticast) {
      const int rank = static_cast<int>(cluster_rank());
      for (int row = rank + 2 * thread; row < args.tokens; row += 64) {
        bulk_copy_multicast(tile + row * args.row_bytes,
                            args.act + row * args.row_bytes, args.row_bytes,
                            full, 0x3);
      }
    }
  }
  if constexpr (kPath == Path::kCpAsync) {
    for (int o = thread * 16; o < act_bytes; o += kThreads * 16) {
      hd::copy_16_async(tile + o, args.act + o, true);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
  }
  hd::mbarrier_wait_parity(full, 0);
  __syncthreads();
  float sum = 0.0f;
  const int words = (act_bytes + args.w_bytes) / 4;
  for (int i = thread; i < words; i += kThreads * 64) {
    sum += reinterpret_cast<const float*>(s_tile)[i];
  }
  // No block leaves while its peer's copies into it may be in flight.
  if constexpr (kPath == Path::kMulticast) cluster_sync();
  if (sum == 12345.0f) *args.sink = sum;
#endif
}

template <Path kPath>
float launch_us(ProbeArgs args, int blocks, const uint8_t* weight_copies,
                size_t copy_bytes, cudaStream_t stream) {
  const auto kernel = whole_k_kernel<kPath>;
  const int act_bytes = kPath == Path::kNone ? 0 : args.tokens * args.row_bytes;
  const int smem = act_bytes + args.w_bytes;
  CHECK(cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int cluster = kPath == Path::kMulticast ? 2 : 1;
  cudaLaunchAttribute attribute{};
  const cudaLaunchConfig_t config = cluster_launch_config(
      blocks, kThreads, smem, cluster, stream, &attribute);
  constexpr int kLaunches = 2 * kWeightCopies;
  return median_graph_us(stream, kLaunches, 15, [&](int i) {
    ProbeArgs launch_args = args;
    launch_args.weights = weight_copies + (i % kWeightCopies) * copy_bytes;
    CHECK(cudaLaunchKernelEx(&config, kernel, launch_args));
  });
}

const char* PathName(Path path) {
  switch (path) {
    case Path::kNone:
      return "none";
    case Path::kCpAsync:
      return "cp.async";
    case Path::kBulk:
      return "bulk";
    case Path::kMulticast:
      return "multicast";
  }
  return "?";
}

}  // namespace

int main() {
  const ProbeGpu gpu = open_probe_gpu();
  // (blocks, tokens, K, weight KB per block): 4096² at M = 16 in 32-row
  // blocks (the planned tile holds all of K); the same at M = 8; 6144 rows
  // in 64-row blocks over half of K = 4096 (all of K does not fit).
  const int shapes[][4] = {
      {128, 16, 4096, 64}, {128, 8, 4096, 64}, {96, 16, 2048, 64}};
  std::printf("%s, %d SMs; %d threads per block, one block per SM\n",
              gpu.prop.name, gpu.sms, kThreads);
  std::printf("%7s %7s %6s %6s %10s %10s %12s\n", "blocks", "tokens", "K",
              "w KB", "path", "us", "minus none");
  for (const auto& shape : shapes) {
    const int blocks = shape[0];
    const int tokens = shape[1];
    const int row_bytes = shape[2] * 2;
    const int w_bytes = shape[3] * 1024;
    const size_t copy_bytes = static_cast<size_t>(blocks) * w_bytes;
    uint8_t* act = nullptr;
    uint8_t* weights = nullptr;
    CHECK(cudaMalloc(&act, static_cast<size_t>(tokens) * row_bytes));
    CHECK(cudaMalloc(&weights, copy_bytes * kWeightCopies));
    CHECK(cudaMemset(act, 1, static_cast<size_t>(tokens) * row_bytes));
    CHECK(cudaMemset(weights, 1, copy_bytes * kWeightCopies));
    const ProbeArgs args{act, weights, tokens, row_bytes, w_bytes, gpu.sink};
    float none_us = 0.0f;
    for (Path path :
         {Path::kNone, Path::kCpAsync, Path::kBulk, Path::kMulticast}) {
      const float us =
          path == Path::kNone
              ? launch_us<Path::kNone>(args, blocks, weights, copy_bytes,
                                       gpu.stream)
          : path == Path::kCpAsync
              ? launch_us<Path::kCpAsync>(args, blocks, weights, copy_bytes,
                                          gpu.stream)
          : path == Path::kBulk
              ? launch_us<Path::kBulk>(args, blocks, weights, copy_bytes,
                                       gpu.stream)
              : launch_us<Path::kMulticast>(args, blocks, weights, copy_bytes,
                                            gpu.stream);
      if (path == Path::kNone) none_us = us;
      std::printf("%7d %7d %6d %6d %10s %10.2f %12.2f\n", blocks, tokens,
                  shape[2], shape[3], PathName(path), us, us - none_us);
    }
    CHECK(cudaFree(act));
    CHECK(cudaFree(weights));
  }
  CHECK(cudaFree(gpu.sink));
  CHECK(cudaStreamDestroy(gpu.stream));
  return 0;
}
