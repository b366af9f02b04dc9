// Is the L2 -> SM fabric what bounds the narrow k-split blocks, and does
// cluster multicast relieve it? At 8-16 tokens every 16- or 32-row k-split
// block reads the whole activation tile from L2, two to four times its
// weights' bytes, and the small layers' times fit "weights + activations at
// ~8 TB/s" (bench/decode-notes.md v56). This probe streams a decode-like
// ring with no compute: per stage an activation tile that every block reads
// (L2-resident) and, optionally, a weight tile of the block's own (HBM), in
// three ways:
//   cp.async  - every thread copies 16-byte pieces (the kernel's path);
//   bulk      - one thread per block issues cp.async.bulk per stage;
//   multicast - blocks in clusters of two; each issues half of the
//               activation tile with .multicast::cluster into both blocks'
//               rings (one L2 read, two deliveries), weights as in bulk; a
//               stage is refilled once both blocks released it (a remote
//               mbarrier arrive).
// It prints the time per launch and the delivered bytes per second (every
// block's activation and weight bytes / time). Results:
// bench/results/multicast-probe-<date>.txt. Built and run on the GPU
// machine:
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
//     -I kernels/device bench/probes/multicast_probe.cu -o multicast_probe &&
//     ./multicast_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "arch/async_copy.cuh"
#include "arch/bulk_copy.cuh"
#include "probe_check.h"
#include "probe_cluster_copy.cuh"

namespace {

constexpr int kThreads = 256;
constexpr int kStages = 4;
constexpr int kBlocks = 256;             // two per SM, as the k-split grids
constexpr int kActBufferKb = 128;        // 16 tokens x 4096 columns x 2 bytes
constexpr int kPaddedSmem = 100 * 1024;  // holds two blocks per SM

enum class Path { kCpAsync, kBulk, kMulticast };

namespace hd = ::hummingd::device;

struct ProbeArgs {
  const uint8_t* act;      // kActBufferKb KB, read by every block
  const uint8_t* weights;  // the blocks' own tiles, back to back
  int act_stage_bytes;
  int w_stage_bytes;
  int tiles;  // per block
  float* sink;
};

// One block's ring: stage t holds activation tile t % (buffer / stage) and
// the block's weight tile t. The "compute" reads one word per thread.
template <Path kPath>
__global__ void __launch_bounds__(kThreads) ring_kernel(ProbeArgs args) {
#if defined(HUMMINGD_HAS_BULK_COPY)  // the device pass for sm_90+
  extern __shared__ __align__(1024) uint8_t s_ring[];
  __shared__ __align__(8) uint64_t s_full[kStages];
  __shared__ __align__(8) uint64_t s_empty[kStages];
  const int thread = threadIdx.x;
  const int stage_bytes = args.act_stage_bytes + args.w_stage_bytes;
  const int act_tiles =
      args.act_stage_bytes > 0 ? kActBufferKb * 1024 / args.act_stage_bytes : 1;
  const uint8_t* w_block = args.weights + static_cast<size_t>(blockIdx.x) *
                                              args.tiles * args.w_stage_bytes;
  const uint32_t rank = kPath == Path::kMulticast ? cluster_rank() : 0;
  const uint32_t ring = smem_address(s_ring);

  if (kPath != Path::kCpAsync && thread == 0) {
    for (int s = 0; s < kStages; ++s) {
      hd::mbarrier_init(smem_address(&s_full[s]), 1);
      // Multicast: both blocks of the cluster release a stage.
      hd::mbarrier_init(smem_address(&s_empty[s]),
                        kPath == Path::kMulticast ? 2 : 1);
    }
    hd::mbarrier_init_fence();
  }
  if (kPath == Path::kMulticast) {
    cluster_sync();
  } else {
    __syncthreads();
  }

  auto produce = [&](int t) {
    const int s = t % kStages;
    const uint32_t dst = ring + s * stage_bytes;
    const uint8_t* act = args.act + (t % act_tiles) * args.act_stage_bytes;
    const uint8_t* w = w_block + static_cast<size_t>(t) * args.w_stage_bytes;
    if constexpr (kPath == Path::kCpAsync) {
      for (int o = thread * 16; o < args.act_stage_bytes; o += kThreads * 16) {
        hd::copy_16_async(dst + o, act + o, true);
      }
      for (int o = thread * 16; o < args.w_stage_bytes; o += kThreads * 16) {
        hd::copy_16_async(dst + args.act_stage_bytes + o, w + o, true);
      }
      asm volatile("cp.async.commit_group;" ::: "memory");
    } else if (thread == 0) {
      const uint32_t full = smem_address(&s_full[s]);
      if (t >= kStages) {
        hd::mbarrier_wait_parity(smem_address(&s_empty[s]),
                                 ((t / kStages) - 1) & 1);
      }
      hd::mbarrier_arrive_expect_tx(full, stage_bytes);
      if (args.act_stage_bytes == 0) {
        // weights only
      } else if constexpr (kPath == Path::kBulk) {
        bulk_copy(dst, act, args.act_stage_bytes, full);
      } else {
        const int half = args.act_stage_bytes / 2;
        bulk_copy_multicast(dst + rank * half, act + rank * half, half, full,
                            0x3);
      }
      if (args.w_stage_bytes > 0) {
        bulk_copy(dst + args.act_stage_bytes, w, args.w_stage_bytes, full);
      }
    }
  };

  for (int t = 0; t < kStages - 1 && t < args.tiles; ++t) produce(t);
  float sum = 0.0f;
  for (int t = 0; t < args.tiles; ++t) {
    if (t + kStages - 1 < args.tiles) {
      produce(t + kStages - 1);
    } else if (kPath == Path::kCpAsync) {
      asm volatile("cp.async.commit_group;" ::: "memory");
    }
    const int s = t % kStages;
    if constexpr (kPath == Path::kCpAsync) {
      asm volatile("cp.async.wait_group %0;" ::"n"(kStages - 1) : "memory");
      __syncthreads();
    } else {
      hd::mbarrier_wait_parity(smem_address(&s_full[s]), (t / kStages) & 1);
    }
    sum += reinterpret_cast<const float*>(s_ring + s * stage_bytes)[thread];
    __syncthreads();  // every thread is done with stage s
    if (kPath != Path::kCpAsync && thread == 0) {
      const uint32_t empty = smem_address(&s_empty[s]);
      if constexpr (kPath == Path::kMulticast) {
        mbar_arrive_cluster(empty, 0);
        mbar_arrive_cluster(empty, 1);
      } else {
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(empty)
                     : "memory");
      }
    }
  }
  // No block leaves while its cluster peer may still write into its ring
  // or arrive on its barriers.
  if (kPath == Path::kMulticast) cluster_sync();
  if (sum == 12345.0f) *args.sink = sum;
#endif
}

template <Path kPath>
float launch_us(const ProbeArgs& args, cudaStream_t stream) {
  const auto kernel = ring_kernel<kPath>;
  CHECK(cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kPaddedSmem));
  cudaLaunchAttribute attribute{};
  const cudaLaunchConfig_t config = cluster_launch_config(
      kBlocks, kThreads, kPaddedSmem, kPath == Path::kMulticast ? 2 : 1, stream,
      &attribute);
  return median_launch_us(
      stream, 7, [&] { CHECK(cudaLaunchKernelEx(&config, kernel, args)); });
}

}  // namespace

int main() {
  const ProbeGpu gpu = open_probe_gpu();
  const cudaDeviceProp& prop = gpu.prop;
  const cudaStream_t stream = gpu.stream;
  constexpr int kTiles = 256;  // per block: long enough to hide the launch
  uint8_t* act = nullptr;
  uint8_t* weights = nullptr;
  const size_t max_w_bytes = static_cast<size_t>(kBlocks) * kTiles * 16384;
  CHECK(cudaMalloc(&act, kActBufferKb * 1024));
  CHECK(cudaMalloc(&weights, max_w_bytes));
  CHECK(cudaMemset(act, 1, kActBufferKb * 1024));
  CHECK(cudaMemset(weights, 1, max_w_bytes));
  std::printf(
      "%s, %d SMs; %d blocks of %d threads, %d stages, %d tiles per "
      "block, a %d KB activation buffer every block reads\n",
      prop.name, prop.multiProcessorCount, kBlocks, kThreads, kStages, kTiles,
      kActBufferKb);
  std::printf("%10s %8s %10s %10s %12s %12s %12s\n", "act KB", "w KB", "path",
              "us", "act TB/s", "w TB/s", "total TB/s");
  // (activation, weight) KB per stage: activations alone; 16 tokens x 512
  // columns over 16 rows of 4-bit weights (4096² at M = 16, 16-row blocks);
  // 16 tokens over 32 rows; 8 tokens x 1024 over 32 rows (8192² at M = 8);
  // weights alone. At most 24 KB per stage: four stages keep two blocks per
  // SM.
  const int shapes[][2] = {{16, 0}, {16, 4}, {16, 8}, {8, 8}, {0, 16}};
  for (const auto& shape : shapes) {
    ProbeArgs args{act,    weights, shape[0] * 1024, shape[1] * 1024,
                   kTiles, gpu.sink};
    const double act_bytes = double(kBlocks) * kTiles * args.act_stage_bytes;
    const double w_bytes = double(kBlocks) * kTiles * args.w_stage_bytes;
    for (Path path : {Path::kCpAsync, Path::kBulk, Path::kMulticast}) {
      if (shape[0] == 0 && path == Path::kMulticast) continue;
      const float us =
          path == Path::kCpAsync ? launch_us<Path::kCpAsync>(args, stream)
          : path == Path::kBulk  ? launch_us<Path::kBulk>(args, stream)
                                 : launch_us<Path::kMulticast>(args, stream);
      const char* name = path == Path::kCpAsync ? "cp.async"
                         : path == Path::kBulk  ? "bulk"
                                                : "multicast";
      std::printf("%10d %8d %10s %10.1f %12.2f %12.2f %12.2f\n", shape[0],
                  shape[1], name, us, act_bytes / us * 1e-6,
                  w_bytes / us * 1e-6, (act_bytes + w_bytes) / us * 1e-6);
    }
  }
  CHECK(cudaFree(act));
  CHECK(cudaFree(weights));
  CHECK(cudaFree(gpu.sink));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
