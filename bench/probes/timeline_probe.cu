// Where the time of a decode GEMM launch goes, phase by phase: the real
// wgmma decode skeleton (gemm/wgmma_gemm.cuh) built with its timeline marks
// on (HUMMINGD_TIMELINE), launched back to back with programmatic
// dependent launch the way the benchmark's CUDA graph does, rotating over
// weight copies that exceed 3x L2. Thread 0 of every block stamps
// %globaltimer at the skeleton's marks:
//   0 entry, 1 previous kernel complete (griddepcontrol.wait),
//   2 first k-tile landed, 3 last k-tile landed, 4 accumulators final,
//   5 split-K arrival done, 6 output stored (the block that stores).
// Built and run on the GPU machine from the repository root:
//
//   nvcc -O3 -std=c++17 -arch=sm_90a -Ikernels/device \
//     bench/probes/timeline_probe.cu -o timeline_probe && ./timeline_probe
//     [DIR]
//
// Prints, per layer, µs per launch (graph replay, as the benchmark) and for
// one launch in the middle of the chain the spread over blocks (min / median
// / p90 / max, µs from the launch's first block entry) of every mark; with
// DIR, one CSV per layer there with every block's grid position, SM and
// marks.
// Weights, scales and activations are random bits of the right ranges; the
// probe times, it does not check numerics (the GPU suite does).
#define HUMMINGD_TIMELINE 1

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe_check.h"

namespace {

constexpr int kMarks = 8;         // 0..6 the skeleton's marks, 7 the SM id
const char* g_csv_dir = nullptr;  // argv[1]: per-block CSV files go there
// HUMMINGD_PROBE_PREPASS=1 (decode-notes v95): each GEMM launch follows a
// launch of split_activations below, as a GEMM on activations split into
// two int8 halves would need; the GEMM itself is unchanged (it still reads
// the fp16 activations), so the time per launch says what the pass adds.
bool g_prepass = false;
__shared__ unsigned long long* s_timeline_row;

}  // namespace

__device__ __forceinline__ void hummingd_timeline_mark(unsigned thread,
                                                       int point) {
  if (thread != 0) return;
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  s_timeline_row[point] = now;
}

#include "gemm/wgmma_gemm.cuh"

namespace {

namespace hd = ::hummingd::device;

// kNull: the same grid, threads and shared memory doing nothing but the
// launch handshake (let the next kernel in, wait for the previous one),
// the floor of a launch in this chain.
template <class Config, int kBlocksPerSm, bool kNull>
__global__ void __launch_bounds__(Config::kThreads, kBlocksPerSm)
    timeline_gemm(hummingd::GemmArgs args, unsigned long long* timeline) {
#if defined(HUMMINGD_HAS_WGMMA)  // the device pass for sm_90a
  if (threadIdx.x == 0) {
    const unsigned block =
        blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    s_timeline_row = timeline + static_cast<size_t>(block) * kMarks;
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    s_timeline_row[7] = sm;
  }
  if constexpr (kNull) {
    hummingd_timeline_mark(threadIdx.x, 0);
    hd::grid_dependents_launch();
    hd::grid_dependency_wait();
    hummingd_timeline_mark(threadIdx.x, 1);
    hummingd_timeline_mark(threadIdx.x, 6);
  } else {
    hd::run_wgmma_gemm<Config>(args, threadIdx.x, blockIdx.x, blockIdx.y,
                               blockIdx.z, gridDim.z);
  }
#endif
}

// Splits fp16 activations (M x K) per token and group of 128 into int8
// halves, a = scale (128 hi + lo) with |128 hi + lo| <= 16256, and writes
// the group's scale and zero-point term (-8 x the sum of its integers, for
// 4-bit codes about 8): one warp per token and group. A programmatic
// dependent in both directions, as the GEMMs around it.
__global__ void split_activations(const __half* x, int8_t* hi, uint8_t* lo,
                                  float* scales, int* terms, int k, int pairs) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (warp >= pairs) return;
  const int groups = k / 128;
  const size_t base = static_cast<size_t>(warp / groups) * k +
                      static_cast<size_t>(warp % groups) * 128 + lane * 4;
  const uint2 packed = *reinterpret_cast<const uint2*>(x + base);
  const __half2 h01 = *reinterpret_cast<const __half2*>(&packed.x);
  const __half2 h23 = *reinterpret_cast<const __half2*>(&packed.y);
  const float a[4] = {__low2float(h01), __high2float(h01), __low2float(h23),
                      __high2float(h23)};
  float amax =
      fmaxf(fmaxf(fabsf(a[0]), fabsf(a[1])), fmaxf(fabsf(a[2]), fabsf(a[3])));
  for (int d = 16; d > 0; d /= 2) {
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, d));
  }
  const float scale = amax > 0.f ? amax / 16256.f : 1.f;
  const float inverse = 1.f / scale;
  uint32_t hi_bytes = 0, lo_bytes = 0;
  int sum = 0;
  for (int i = 0; i < 4; ++i) {
    const int q = __float2int_rn(a[i] * inverse);
    sum += q;
    hi_bytes |= static_cast<uint32_t>((q >> 7) & 0xFF) << (8 * i);
    lo_bytes |= static_cast<uint32_t>(q & 0x7F) << (8 * i);
  }
  *reinterpret_cast<uint32_t*>(hi + base) = hi_bytes;
  *reinterpret_cast<uint32_t*>(lo + base) = lo_bytes;
  for (int d = 16; d > 0; d /= 2) {
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, d);
  }
  if (lane == 0) {
    scales[warp] = scale;
    terms[warp] = -8 * sum;
  }
}

__global__ void fill_random(uint32_t* words, size_t count, uint32_t seed,
                            uint32_t mask, uint32_t base) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u ^ seed;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    words[i] = (h & mask) | base;
  }
}

void fill(void* p, size_t bytes, uint32_t seed, uint32_t mask, uint32_t base) {
  fill_random<<<1024, 256>>>(static_cast<uint32_t*>(p), bytes / 4, seed, mask,
                             base);
  CHECK(cudaGetLastError());
}

// Whether the environment variable `name` is "1" (the probe's case
// selectors, read once at start-up).
bool env_is_one(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] == '1' && value[1] == '\0';
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return -1.0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1) + 0.5)];
}

// fp16 in [0.5, 1): sign 0, exponent 14, random mantissa; two per word.
constexpr uint32_t kHalfMask = 0x03FF03FFu;
constexpr uint32_t kHalfBase = 0x38003800u;

// Returns the output of the last launch (poisoned before it).
template <class Config, int kBlocksPerSm, bool kNull = false>
std::vector<uint16_t> run_layer(const char* name, int splits, int m, bool pdl) {
  using Tile = typename Config::Tile;
  const long long n = Config::kN, k = Config::kK;
  const size_t weight_bytes = static_cast<size_t>(n) * k * Config::kBits / 8;
  const size_t scale_bytes = static_cast<size_t>(Config::kScaleTensorBytes);
  const size_t per_copy = weight_bytes + scale_bytes;
  const int copies = static_cast<int>(180e6 / per_copy) + 2;
  const int n_blocks = static_cast<int>(n / Tile::kBlockN);
  const int m_blocks = (m + Config::kTokens - 1) / Config::kTokens;
  const int blocks = m_blocks * n_blocks * splits;
  constexpr int kLaunches = 24;

  std::vector<void*> weights(copies), scales(copies);
  for (int c = 0; c < copies; ++c) {
    CHECK(cudaMalloc(&weights[c], weight_bytes));
    CHECK(cudaMalloc(&scales[c], scale_bytes));
    fill(weights[c], weight_bytes, 17u + c, 0xFFFFFFFFu, 0u);
    fill(scales[c], scale_bytes, 91u + c, kHalfMask, kHalfBase);
  }
  void *x, *y, *workspace, *counters;
  unsigned long long* timeline;
  const size_t x_bytes = static_cast<size_t>(m) * k * 2;
  const size_t y_bytes = static_cast<size_t>(m) * n * 2;
  const size_t workspace_bytes = static_cast<size_t>(m_blocks) * splits *
                                 n_blocks * Config::kTokens * Tile::kBlockN * 4;
  const size_t counter_bytes =
      static_cast<size_t>((m + 15) / 16) * (n / 16) * 4;
  const size_t timeline_bytes =
      static_cast<size_t>(kLaunches) * blocks * kMarks * 8;
  CHECK(cudaMalloc(&x, x_bytes + 16));
  CHECK(cudaMalloc(&y, y_bytes + 16));
  CHECK(cudaMalloc(&workspace, workspace_bytes + 16));
  CHECK(cudaMalloc(&counters, counter_bytes + 16));
  CHECK(cudaMalloc(&timeline, timeline_bytes));
  fill(x, (x_bytes + 3) / 4 * 4, 5u, kHalfMask, kHalfBase);
  // The pre-pass's outputs (HUMMINGD_PROBE_PREPASS), one per token and group.
  const int pairs = static_cast<int>(m * (k / 128));
  void *split_hi = nullptr, *split_lo = nullptr, *split_scales = nullptr,
       *split_terms = nullptr;
  if (g_prepass) {
    CHECK(cudaMalloc(&split_hi, static_cast<size_t>(m) * k));
    CHECK(cudaMalloc(&split_lo, static_cast<size_t>(m) * k));
    CHECK(cudaMalloc(&split_scales, static_cast<size_t>(pairs) * 4));
    CHECK(cudaMalloc(&split_terms, static_cast<size_t>(pairs) * 4));
  }
  CHECK(cudaMemset(counters, 0, counter_bytes + 16));

  auto kernel = timeline_gemm<Config, kBlocksPerSm, kNull>;
  const int shared_bytes = Config::kSharedBytes;
  CHECK(cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto launch = [&](int i) {
    if (g_prepass) {
      cudaLaunchConfig_t split_config{};
      split_config.gridDim = dim3((pairs + 7) / 8);
      split_config.blockDim = dim3(256);
      split_config.stream = stream;
      cudaLaunchAttribute split_attribute{};
      split_attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      split_attribute.val.programmaticStreamSerializationAllowed = 1;
      split_config.attrs = &split_attribute;
      split_config.numAttrs = 1;
      CHECK(cudaLaunchKernelEx(
          &split_config, split_activations, static_cast<const __half*>(x),
          static_cast<int8_t*>(split_hi), static_cast<uint8_t*>(split_lo),
          static_cast<float*>(split_scales), static_cast<int*>(split_terms),
          static_cast<int>(k), pairs));
    }
    hummingd::GemmArgs args{};
    args.x = x;
    args.weights = static_cast<const hd::u32*>(weights[i % copies]);
    args.scales = scales[i % copies];
    args.y = y;
    args.workspace = splits > 1 ? workspace : nullptr;
    args.split_counters =
        splits > 1 ? static_cast<hd::u32*>(counters) : nullptr;
    args.m = m;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(m_blocks, n_blocks, splits);
    config.blockDim = dim3(Config::kThreads);
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    cudaLaunchAttribute attributes[2] = {};
    int count = 0;
    if (pdl) {
      attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attributes[count++].val.programmaticStreamSerializationAllowed = 1;
    }
    config.attrs = attributes;
    config.numAttrs = count;
    CHECK(cudaLaunchKernelEx(
        &config, kernel, args,
        timeline + static_cast<size_t>(i) * blocks * kMarks));
  };
  cudaGraphExec_t exec = capture_graph(stream, kLaunches, launch);
  cudaEvent_t begin, end;
  CHECK(cudaEventCreate(&begin));
  CHECK(cudaEventCreate(&end));
  std::vector<double> per_launch;
  for (int r = 0; r < 13; ++r) {
    CHECK(cudaEventRecord(begin, stream));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaEventRecord(end, stream));
    CHECK(cudaEventSynchronize(end));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, begin, end));
    if (r >= 3) per_launch.push_back(ms * 1e3 / kLaunches);
  }
  CHECK(cudaMemset(timeline, 0, timeline_bytes));
  CHECK(cudaMemset(y, 0xFF, y_bytes));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  std::vector<uint16_t> output(y_bytes / 2);
  CHECK(cudaMemcpy(output.data(), y, y_bytes, cudaMemcpyDeviceToHost));
  const long poisoned = std::count(output.begin(), output.end(), 0xFFFF);
  std::vector<unsigned long long> stamps(timeline_bytes / 8);
  CHECK(cudaMemcpy(stamps.data(), timeline, timeline_bytes,
                   cudaMemcpyDeviceToHost));

  auto stamp = [&](int launch_index, int block, int point) {
    return stamps[(static_cast<size_t>(launch_index) * blocks + block) *
                      kMarks +
                  point];
  };
  auto first_entry = [&](int launch_index) {
    unsigned long long first = ~0ull;
    for (int b = 0; b < blocks; ++b) {
      first = std::min(first, stamp(launch_index, b, 0));
    }
    return first;
  };
  std::vector<double> periods;
  for (int i = 4; i + 1 < kLaunches; ++i) {
    periods.push_back((first_entry(i + 1) - first_entry(i)) * 1e-3);
  }
  const double bytes = static_cast<double>(per_copy) + x_bytes + y_bytes;
  const double us = percentile(per_launch, 0.5);
  std::printf(
      "\n## %s%s%s, M = %d, %d blocks (%d splits), %d B shared, %s: %.2f us "
      "per "
      "launch (graph), %.2f TB/s; entry-to-entry median %.2f us\n",
      name, kNull ? " (null kernel)" : "",
      g_prepass ? " after the split pre-pass" : "", m, blocks, splits,
      shared_bytes, pdl ? "PDL" : "no PDL", us, bytes / us * 1e-6,
      percentile(periods, 0.5));
  const int mid = kLaunches / 2;
  const unsigned long long origin = first_entry(mid);
  // The previous launch's last block end, relative to this launch's start.
  double previous_end = -1e9;
  for (int b = 0; b < blocks; ++b) {
    const unsigned long long last =
        std::max(stamp(mid - 1, b, 6), stamp(mid - 1, b, 5));
    previous_end = std::max(
        previous_end,
        (static_cast<double>(last) - static_cast<double>(origin)) * 1e-3);
  }
  std::printf(
      "previous launch's last block ends at %+.2f us; %ld of %zu "
      "outputs left poisoned\n",
      previous_end, poisoned, output.size());
  const char* names[7] = {"entry",        "prev complete", "first tile in",
                          "last tile in", "acc final",     "split-K arrival",
                          "output stored"};
  std::printf(
      "| mark | blocks | min | median | p90 | max "
      "|\n|---|---|---|---|---|---|\n");
  for (int p = 0; p < 7; ++p) {
    std::vector<double> at;
    for (int b = 0; b < blocks; ++b) {
      const unsigned long long s = stamp(mid, b, p);
      if (s != 0) {
        at.push_back((static_cast<double>(s) - static_cast<double>(origin)) *
                     1e-3);
      }
    }
    std::printf("| %s | %zu | %.2f | %.2f | %.2f | %.2f |\n", names[p],
                at.size(), percentile(at, 0.0), percentile(at, 0.5),
                percentile(at, 0.9), percentile(at, 1.0));
  }
  // Blocks per SM over the launch, to see how the grid was placed.
  std::vector<int> per_sm(256, 0);
  for (int b = 0; b < blocks; ++b) ++per_sm[stamp(mid, b, 7) & 255];
  int used = 0, most = 0;
  for (int c : per_sm) {
    used += c > 0;
    most = std::max(most, c);
  }
  std::printf("SMs used %d, most blocks on one SM %d\n", used, most);
  // Every block of that launch, for a closer look: grid position, SM and
  // marks in µs from the launch's first entry.
  if (g_csv_dir != nullptr) {
    char path[512];
    // The null kernel of a layer gets its own file (it ran under the same
    // name and once overwrote the real kernel's, decode-notes v81).
    std::snprintf(path, sizeof(path), "%s/%s-m%d-%s%s.csv", g_csv_dir, name, m,
                  pdl ? "pdl" : "nopdl", kNull ? "-null" : "");
    for (char* c = path + std::strlen(g_csv_dir) + 1; *c; ++c) {
      if (*c == ' ') *c = '_';
    }
    if (FILE* file = std::fopen(path, "w")) {
      std::fprintf(file, "block_n,split,sm,blocks_on_sm");
      for (int p = 0; p < 7; ++p) std::fprintf(file, ",mark%d", p);
      std::fprintf(file, "\n");
      for (int b = 0; b < blocks; ++b) {
        const int sm = static_cast<int>(stamp(mid, b, 7) & 255);
        std::fprintf(file, "%d,%d,%d,%d", (b / m_blocks) % n_blocks,
                     b / (m_blocks * n_blocks), sm, per_sm[sm]);
        for (int p = 0; p < 7; ++p) {
          const unsigned long long s = stamp(mid, b, p);
          std::fprintf(
              file, ",%.3f",
              s == 0 ? -1.0
                     : (static_cast<double>(s) - static_cast<double>(origin)) *
                           1e-3);
        }
        std::fprintf(file, "\n");
      }
      std::fclose(file);
    }
  }

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaStreamDestroy(stream));
  for (int c = 0; c < copies; ++c) {
    CHECK(cudaFree(weights[c]));
    CHECK(cudaFree(scales[c]));
  }
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(workspace));
  CHECK(cudaFree(counters));
  CHECK(cudaFree(timeline));
  if (g_prepass) {
    CHECK(cudaFree(split_hi));
    CHECK(cudaFree(split_lo));
    CHECK(cudaFree(split_scales));
    CHECK(cudaFree(split_terms));
  }
  return output;
}

// W4A16: uint4, group 128, fp16 scales, fp16 activations and output.
using W4 = hd::GemmFormat<hd::CodeKind::kUint, 4, 0, 0, hd::ScaleLayout::kGroup,
                          1, 128, hd::ScalarType::kFp16, hd::ZeroKind::kNone,
                          hd::SecondaryKind::kNone, hd::ScalarType::kFp16,
                          hd::ScalarType::kFp16, false>;
// The same with one fp16 scale per output channel (group=channel).
using W4Channel =
    hd::GemmFormat<hd::CodeKind::kUint, 4, 0, 0, hd::ScaleLayout::kChannel, 0,
                   0, hd::ScalarType::kFp16, hd::ZeroKind::kNone,
                   hd::SecondaryKind::kNone, hd::ScalarType::kFp16,
                   hd::ScalarType::kFp16, false>;
using Narrow8 = hd::WgmmaTile<8, 128, 128, 2, 8, false>;
using Narrow8Short = hd::WgmmaTile<8, 128, 128, 2, 4, false>;
// The same in bf16 (scales, activations, output). The probe's fp16 bit
// patterns read as small finite bf16 values: enough to time.
using W4Bf16 =
    hd::GemmFormat<hd::CodeKind::kUint, 4, 0, 0, hd::ScaleLayout::kGroup, 1,
                   128, hd::ScalarType::kBf16, hd::ZeroKind::kNone,
                   hd::SecondaryKind::kNone, hd::ScalarType::kBf16,
                   hd::ScalarType::kBf16, false>;
// Planner v34's 4096x14336 tile at 8 tokens, `8x64x256,warps=1x4,stages=4,
// mma=wgmma,blocks=4` (8 splits), as the codegen stub spells it, and with
// `copy=bulk` (planner v43 for fp16).
using Half8Four = hd::WgmmaTile<8, 64, 256, 1, 4, false, false, false, 1, 4>;
using Half8FourBulk = hd::WgmmaTile<8, 64, 256, 1, 4, true, false, false, 1, 4>;
// The planned 8192² tiles at 8 and 16 tokens and 4096²'s at 16 (decode-notes
// v81, v95).
using Plan8 = hd::WgmmaConfig<
    W4, hd::WgmmaTile<8, 32, 1024, 2, 3, false, false, false, 4>, 8192, 8192>;
using Plan16 =
    hd::WgmmaConfig<W4, hd::WgmmaTile<16, 128, 256, 2, 4>, 8192, 8192>;
using Small16 = hd::WgmmaConfig<
    W4, hd::WgmmaTile<16, 32, 1024, 4, 4, false, false, false, 8, 1>, 4096,
    4096>;
}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_csv_dir = argv[1];
  using hd::WgmmaConfig;
  // Decode-notes v79 (profiles ca): channel-wise scales on 4096x14336 run
  // ~7% slower than groups of 128 on the same tile and splits, with equal
  // instructions and SM active cycles but longer SM idle time. Where in
  // the launch does it sit? (HUMMINGD_PROBE_ONLY_CA=1 runs only these.)
  const bool only_ca = env_is_one("HUMMINGD_PROBE_ONLY_CA");
  const bool only_m16 = env_is_one("HUMMINGD_PROBE_ONLY_M16");
  // Decode-notes v95: what a split pre-pass before every launch costs in
  // the chain, on the 16-token plans of 8192² and 4096² and the 8-token
  // tile of 8192² (HUMMINGD_PROBE_ONLY_PREPASS=1: each without, then with).
  // Decode-notes v117: the 16-token near misses as planned today (planner
  // v68): 4096²'s sixteen-warp tile with all of K in its ring (early=1),
  // and the warpgroup k-slices of 6144x4096 (96 blocks) and 8192² (128),
  // each beside the null kernel of its grid. Where does the time after the
  // release go? (HUMMINGD_PROBE_ONLY_NEAR16=1 runs only these.)
  if (env_is_one("HUMMINGD_PROBE_ONLY_NEAR16")) {
    using WholeK4096 = WgmmaConfig<
        W4, hd::WgmmaTile<16, 32, 1024, 4, 4, false, false, false, 8, 1, 1>,
        4096, 4096>;
    using Slices16 =
        hd::WgmmaTile<16, 64, 512, 4, 4, false, false, false, 4, 1, 1>;
    run_layer<WholeK4096, 1>("4096x4096 16x32x1024 ksplit=8 early=1", 1, 16,
                             true);
    run_layer<WholeK4096, 1, true>("4096x4096 16x32x1024 ksplit=8 early=1", 1,
                                   16, true);
    run_layer<WgmmaConfig<W4, Slices16, 6144, 4096>, 1>(
        "6144x4096 16x64x512 ksplit=4 early=1", 1, 16, true);
    run_layer<WgmmaConfig<W4, Slices16, 6144, 4096>, 1, true>(
        "6144x4096 16x64x512 ksplit=4 early=1", 1, 16, true);
    run_layer<WgmmaConfig<W4, Slices16, 8192, 8192>, 1>(
        "8192x8192 16x64x512 ksplit=4 early=1", 1, 16, true);
    return 0;
  }
  if (env_is_one("HUMMINGD_PROBE_ONLY_PREPASS")) {
    for (bool prepass : {false, true}) {
      g_prepass = prepass;
      run_layer<Plan16, 2>("8192x8192 16x128x256", 4, 16, true);
      run_layer<Small16, 1>("4096x4096 16x32x1024 ksplit=8", 1, 16, true);
      run_layer<Plan8, 2>("8192x8192 8x32x1024 ksplit=4", 1, 8, true);
      run_layer<Plan16, 2, true>("8192x8192 16x128x256", 4, 16, true);
    }
    return 0;
  }
  // Decode-notes v86 / v87 (a): on 4096x14336's half tile bulk weight
  // copies run fp16 2-4% faster and bf16 7-8% slower in the bench's
  // back-to-back replays, while an isolated launch (ncu) has both ~2.5%
  // slower: where in the overlap of consecutive launches do they differ?
  // (HUMMINGD_PROBE_ONLY_BULK=1 runs only these, M = 8.)
  if (env_is_one("HUMMINGD_PROBE_ONLY_BULK")) {
    run_layer<WgmmaConfig<W4, Half8Four, 4096, 14336>, 4>(
        "4096x14336 fp16 cp.async", 8, 8, true);
    run_layer<WgmmaConfig<W4, Half8FourBulk, 4096, 14336>, 4>(
        "4096x14336 fp16 bulk", 8, 8, true);
    run_layer<WgmmaConfig<W4Bf16, Half8Four, 4096, 14336>, 4>(
        "4096x14336 bf16 cp.async", 8, 8, true);
    run_layer<WgmmaConfig<W4Bf16, Half8FourBulk, 4096, 14336>, 4>(
        "4096x14336 bf16 bulk", 8, 8, true);
    return 0;
  }
  // Decode-notes v87: 4096² at 64 tokens runs 11.5 us against a ~5 us floor
  // (tensor time, decode issue, ramp), its blocks 4 k-tiles long with 32 KB
  // partials over 8 splits: where does the launch go? The plan's tile and
  // 64-row blocks of one warpgroup. (HUMMINGD_PROBE_ONLY_M64=1 runs only
  // these.)
  if (env_is_one("HUMMINGD_PROBE_ONLY_M64")) {
    using Plan64 =
        WgmmaConfig<W4, hd::WgmmaTile<64, 128, 128, 2, 4>, 4096, 4096>;
    using Half64 =
        WgmmaConfig<W4, hd::WgmmaTile<64, 64, 128, 1, 4>, 4096, 4096>;
    run_layer<Plan64, 2>("4096x4096 64x128x128", 8, 64, true);
    run_layer<Plan64, 2, true>("4096x4096 64x128x128", 8, 64, true);
    run_layer<Half64, 2>("4096x4096 64x64x128", 4, 64, true);
    return 0;
  }
  using Ca128 = WgmmaConfig<W4, Half8Four, 4096, 14336>;
  using CaChannel = WgmmaConfig<W4Channel, Half8Four, 4096, 14336>;
  if (!only_m16) {
    for (int m : {1, 8}) {
      run_layer<Ca128, 4>("4096x14336 g128", 8, m, true);
      run_layer<CaChannel, 4>("4096x14336 channel", 8, m, true);
    }
  }
  if (only_ca) return 0;
  // Decode-notes v81: 16 tokens against 8 on the planned tiles. 8192² at
  // M = 16 runs 12.2 us against 10.3 at M = 8 (and 4096² 5.7 against 4.2):
  // is the extra time in the loop, or in the split-K tail that the 8-token
  // k-split tile does not have? The 16-token ones beside the null kernel
  // of their grid. (HUMMINGD_PROBE_ONLY_M16=1 runs only these.)
  {
    using Small8 =
        WgmmaConfig<W4,
                    hd::WgmmaTile<8, 16, 1024, 2, 4, false, false, false, 8>,
                    4096, 4096>;
    run_layer<Plan8, 2>("8192x8192 8x32x1024 ksplit=4", 1, 8, true);
    run_layer<Plan16, 2>("8192x8192 16x128x256", 4, 16, true);
    run_layer<Plan16, 2, true>("8192x8192 16x128x256", 4, 16, true);
    run_layer<Small8, 2>("4096x4096 8x16x1024 ksplit=8", 1, 8, true);
    run_layer<Small16, 1>("4096x4096 16x32x1024 ksplit=8", 1, 16, true);
    run_layer<Small16, 1, true>("4096x4096 16x32x1024 ksplit=8", 1, 16, true);
  }
  if (only_m16) return 0;
  // Planner v12's M <= 8 tiles and splits (four blocks per SM for the
  // short ring), each beside the null kernel of its grid.
  using L8192 = WgmmaConfig<W4, Narrow8Short, 8192, 8192>;
  run_layer<L8192, 4>("8192x8192", 8, 1, true);
  run_layer<L8192, 4, true>("8192x8192", 8, 1, true);
  using L4096 = WgmmaConfig<W4, Narrow8, 4096, 4096>;
  run_layer<L4096, 2>("4096x4096", 8, 1, true);
  run_layer<L4096, 2, true>("4096x4096", 8, 1, true);
  using L6144 = WgmmaConfig<W4, Narrow8Short, 6144, 4096>;
  run_layer<L6144, 4>("6144x4096", 8, 1, true);
  using L14336 = WgmmaConfig<W4, Narrow8Short, 4096, 14336>;
  run_layer<L14336, 4>("4096x14336", 16, 1, true);
  run_layer<L14336, 4, true>("4096x14336", 16, 1, true);
  return 0;
}
