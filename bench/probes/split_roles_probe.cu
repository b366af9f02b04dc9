// Does the decode's ALU work overlap the tensor core's when other warps do
// it? wgmma_probe.cu found that in the decode kernel's own rhythm (each
// warpgroup decodes its A fragments, then issues the wgmma) a step costs
// the tensor time plus the instruction time: the two add. A warp-specialized
// kernel would split the roles: decode warps turn packed weights (read from
// shared memory) into 16-bit operands they store back to shared memory, an
// MMA warpgroup issues wgmmas that read them there. This probe asks whether
// the roles overlap, and what the shared-memory traffic of that design
// costs, with no global memory traffic at all.
//
// Warpgroup 0 of each block issues kSteps wgmmas m64nNk16 (A from registers
// or from shared memory, B from shared memory; fixed operands), warpgroup 1
// runs kSteps x kRounds rounds of the 4-bit decode's ALU operations (four
// operand pairs per round, about 17 operations), and with kAluDecodeStore reads
// one packed word from shared memory and stores its four pairs (16 bytes) back
// per round, as a decode-to-shared-memory producer would. kRole picks who
// runs: 1 wgmma only, 2 ALU only, 3 both. "both" near the larger of the two
// alone means the roles overlap; near their sum means they do not.
//
// Layouts modelled (cycles per step are per block, 2 blocks per SM):
//   weights as A (64 weight rows x N tokens, N = 32 / 64): one round of
//     4 pairs per thread per step decodes the 64 x 16 A tile;
//   weights as B (tokens as A, N = 128 weight rows): two rounds per step
//     decode the 128 x 16 B tile (A's 64 rows hold the tokens, padded).
// Results: bench/results/split-roles-probe-<date>.txt.
// Built and run on the GPU machine:
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
//     -I kernels/device bench/probes/split_roles_probe.cu -o split_roles_probe
//     &&
//     ./split_roles_probe
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "arch/wgmma.cuh"
#include "probe_check.h"

namespace {

namespace hd = ::hummingd::device;

constexpr int kThreads = 256;  // warpgroup 0: wgmma, warpgroup 1: ALU
constexpr int kSteps = 4096;
constexpr int kLaunches = 10;  // per timed graph
constexpr int kWgmmaOnly = 1;
constexpr int kAluOnly = 2;
constexpr int kBoth = 3;
// What the ALU warpgroup runs per round: the 4-bit decode kept in
// registers, the same with its packed word read from and its pairs stored
// to shared memory, the decode with an integer operation in place of its
// f16x2 subtract, or 16 operations of one pipe (f16x2 FMA, fp32 FMA, LOP3).
constexpr int kAluDecode = 0;
constexpr int kAluDecodeStore = 1;
constexpr int kAluDecodeInt = 2;
constexpr int kAluHalf = 3;
constexpr int kAluFloat = 4;
constexpr int kAluInt = 5;
constexpr const char* kAluNames[] = {"decode",   "decode+LDS/STS", "decode-int",
                                     "16 HFMA2", "16 FFMA",        "16 LOP3"};

// The accumulator and operand lists of m64nNk16 (N / 2 fp32 per thread).
#define PROBE_ACC_32                                                        \
  "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]),     \
      "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), \
      "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]),           \
      "+f"(acc[14]), "+f"(acc[15])
#define PROBE_D_32 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define PROBE_RS_TAIL_32 ", {%16, %17, %18, %19}, %20, p, 1, 1, 0;"
#define PROBE_SS_TAIL_32 ", %16, %17, p, 1, 1, 0, 0;"
#define PROBE_ACC_64                                                        \
  "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]),     \
      "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), \
      "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]),           \
      "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]),           \
      "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]),           \
      "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]),           \
      "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),           \
      "+f"(acc[30]), "+f"(acc[31])
#define PROBE_D_64                                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "  \
  "%30, %31}"
#define PROBE_RS_TAIL_64 ", {%32, %33, %34, %35}, %36, p, 1, 1, 0;"
#define PROBE_SS_TAIL_64 ", %32, %33, p, 1, 1, 0, 0;"
#define PROBE_ACC_128                                                       \
  "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]),     \
      "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), \
      "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]),           \
      "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]),           \
      "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]),           \
      "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]),           \
      "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),           \
      "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]),           \
      "+f"(acc[34]), "+f"(acc[35]), "+f"(acc[36]), "+f"(acc[37]),           \
      "+f"(acc[38]), "+f"(acc[39]), "+f"(acc[40]), "+f"(acc[41]),           \
      "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]),           \
      "+f"(acc[46]), "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]),           \
      "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]),           \
      "+f"(acc[54]), "+f"(acc[55]), "+f"(acc[56]), "+f"(acc[57]),           \
      "+f"(acc[58]), "+f"(acc[59]), "+f"(acc[60]), "+f"(acc[61]),           \
      "+f"(acc[62]), "+f"(acc[63])
#define PROBE_D_128                                                         \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "  \
  "%30, %31, "                                                              \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "  \
  "%46, %47, "                                                              \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "  \
  "%62, %63}"
#define PROBE_RS_TAIL_128 ", {%64, %65, %66, %67}, %68, p, 1, 1, 0;"
#define PROBE_SS_TAIL_128 ", %64, %65, p, 1, 1, 0, 0;"

#define PROBE_WGMMA(N, TAIL, ...)                \
  asm volatile(                                  \
      "{\n.reg .pred p;\nsetp.ne.u32 p, 1, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n" #N     \
      "k16.f32.f16.f16 " PROBE_D_##N TAIL "\n}"  \
      : PROBE_ACC_##N                            \
      : __VA_ARGS__)

template <int kN, bool kSharedA>
__device__ void issue_wgmma(float (&acc)[kN / 2], const uint32_t (&a)[4],
                            uint64_t desc_a, uint64_t desc_b) {
#if defined(HUMMINGD_HAS_WGMMA)
  if constexpr (kSharedA) {
    if constexpr (kN == 32)
      PROBE_WGMMA(32, PROBE_SS_TAIL_32, "l"(desc_a), "l"(desc_b));
    if constexpr (kN == 64)
      PROBE_WGMMA(64, PROBE_SS_TAIL_64, "l"(desc_a), "l"(desc_b));
    if constexpr (kN == 128)
      PROBE_WGMMA(128, PROBE_SS_TAIL_128, "l"(desc_a), "l"(desc_b));
  } else {
    if constexpr (kN == 32)
      PROBE_WGMMA(32, PROBE_RS_TAIL_32, "r"(a[0]), "r"(a[1]), "r"(a[2]),
                  "r"(a[3]), "l"(desc_b));
    if constexpr (kN == 64)
      PROBE_WGMMA(64, PROBE_RS_TAIL_64, "r"(a[0]), "r"(a[1]), "r"(a[2]),
                  "r"(a[3]), "l"(desc_b));
    if constexpr (kN == 128)
      PROBE_WGMMA(128, PROBE_RS_TAIL_128, "r"(a[0]), "r"(a[1]), "r"(a[2]),
                  "r"(a[3]), "l"(desc_b));
  }
#endif
}

template <int kN, bool kSharedA, int kRounds, int kAlu, int kRole>
__global__ void __launch_bounds__(kThreads, 2)
    split_roles(float* sink, uint32_t seed) {
#if defined(HUMMINGD_HAS_WGMMA)
  __shared__ __align__(1024) uint8_t s_a[64 * 128];     // (64, 64) fp16
  __shared__ __align__(1024) uint8_t s_b[128 * 128];    // (128, 64) fp16
  __shared__ __align__(1024) uint8_t s_ring[8 * 2048];  // decoded tiles
  for (int i = threadIdx.x; i < 64 * 128 / 4; i += kThreads) {
    reinterpret_cast<uint32_t*>(s_a)[i] = 0x3c003c00u;  // fp16 1.0 pairs
  }
  for (int i = threadIdx.x; i < 128 * 128 / 4; i += kThreads) {
    reinterpret_cast<uint32_t*>(s_b)[i] = 0x3c003c00u;
  }
  for (int i = threadIdx.x; i < 8 * 2048 / 4; i += kThreads) {
    reinterpret_cast<uint32_t*>(s_ring)[i] = seed * 2654435761u + i;
  }
  __syncthreads();
  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0 && (kRole & kWgmmaOnly)) {
    const uint64_t desc_a = hd::wgmma_descriptor_k_major_sw128(
        static_cast<uint32_t>(__cvta_generic_to_shared(s_a)));
    const uint64_t desc_b = hd::wgmma_descriptor_k_major_sw128(
        static_cast<uint32_t>(__cvta_generic_to_shared(s_b)));
    float acc[kN / 2];
    for (int i = 0; i < kN / 2; ++i) acc[i] = 0.f;
    const uint32_t a[4] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u};
    for (int step = 0; step < kSteps; ++step) {
      hd::wgmma_wait<1>();
      hd::wgmma_fence();
      const uint64_t k = (step & 3) * 2;  // next k16 slice: 32 bytes on
      issue_wgmma<kN, kSharedA>(acc, a, desc_a + k, desc_b + k);
      hd::wgmma_commit();
    }
    hd::wgmma_wait<0>();
    float sum = 0.f;
    for (int i = 0; i < kN / 2; ++i) sum += acc[i];
    if (sum == 1234.5f) sink[0] = sum;
  }
  if (warpgroup == 1 && (kRole & kAluOnly)) {
    const int lane = threadIdx.x % 128;
    const uint32_t s_ring_base =
        static_cast<uint32_t>(__cvta_generic_to_shared(s_ring));
    uint32_t words = seed ^ threadIdx.x;
    uint32_t folded = 0;
    // kAluHalf / kAluFloat / kAluInt: 16 operations of one pipe per round
    // in 8 independent chains (so that issue, not latency, bounds them).
    uint32_t chains[8];
    for (int c = 0; c < 8; ++c) chains[c] = words + c * 0x01000193u;
    for (int round = 0; round < kSteps * kRounds; ++round) {
      if constexpr (kAlu == kAluHalf || kAlu == kAluFloat || kAlu == kAluInt) {
        for (int c = 0; c < 16; ++c) {
          uint32_t& r = chains[c % 8];
          if constexpr (kAlu == kAluHalf) {
            asm volatile("fma.rn.f16x2 %0, %0, %1, %2;"
                         : "+r"(r)
                         : "r"(0x3c013c01u), "r"(0x00010001u));
          } else if constexpr (kAlu == kAluFloat) {
            asm volatile("fma.rn.f32 %0, %0, %1, %2;"
                         : "+r"(r)
                         : "f"(1.0001f), "f"(1e-7f));
          } else {
            asm volatile("lop3.b32 %0, %0, %1, %2, 0x96;"
                         : "+r"(r)
                         : "r"(0x5bd1e995u), "r"(round));
          }
        }
        continue;
      }
      const uint32_t slot = s_ring_base + (round & 7) * 2048 + lane * 16;
      if constexpr (kAlu == kAluDecodeStore) {
        // The packed word a producer would read: 4 bytes per thread per
        // round, 512 bytes per warpgroup (a 64 x 16 tile of 4-bit codes).
        uint32_t packed;
        asm volatile("ld.shared.b32 %0, [%1];"
                     : "=r"(packed)
                     : "r"(s_ring_base + ((round + 3) & 7) * 2048 + lane * 4));
        words ^= packed;
      }
      words = words * 1664525u + 1013904223u;
      uint32_t pairs[4];
      for (int p = 0; p < 4; ++p) {
        pairs[p] = ((words >> (4 * p)) & 0x000f000fu) | 0x64006400u;
        if constexpr (kAlu == kAluDecodeInt) {
          // The same count with an integer operation in the f16x2
          // subtract's place (a decode that leaves the magic bias in the
          // operand and takes it out after the MMA).
          asm volatile("xor.b32 %0, %0, %1;" : "+r"(pairs[p]) : "r"(round));
        } else {
          asm volatile("sub.rn.f16x2 %0, %0, %1;"
                       : "+r"(pairs[p])
                       : "r"(0x64086408u));
        }
      }
      if constexpr (kAlu == kAluDecodeStore) {
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(slot),
                     "r"(pairs[0]), "r"(pairs[1]), "r"(pairs[2]), "r"(pairs[3])
                     : "memory");
      } else {
        folded ^= pairs[0] ^ pairs[1] ^ pairs[2] ^ pairs[3];
      }
    }
    for (int c = 0; c < 8; ++c) folded ^= chains[c];
    if (folded == 0x12345678u) sink[0] = 1.f;
  }
#endif
}

template <int kN, bool kSharedA, int kRounds, int kAlu, int kRole>
double cycles_per_step(cudaStream_t stream, float* sink, int sm_count,
                       int clock_khz) {
  const int blocks = sm_count * 2;
  auto launch = [&](int i) {
    split_roles<kN, kSharedA, kRounds, kAlu, kRole>
        <<<blocks, kThreads, 0, stream>>>(sink, i);
  };
  const double ms = median_graph_us(stream, kLaunches, 7, launch) / 1000.0;
  return ms * clock_khz / kSteps;
}

// One line: the three roles' cycles per step, and where "both" falls
// between the larger alone (overlap, 0%) and the sum (none, 100%).
template <int kN, bool kSharedA, int kRounds, int kAlu>
void compare(const char* layout, cudaStream_t stream, float* sink, int sms,
             int clock_khz) {
  const double wgmma = cycles_per_step<kN, kSharedA, kRounds, kAlu, kWgmmaOnly>(
      stream, sink, sms, clock_khz);
  const double alu = cycles_per_step<kN, kSharedA, kRounds, kAlu, kAluOnly>(
      stream, sink, sms, clock_khz);
  const double both = cycles_per_step<kN, kSharedA, kRounds, kAlu, kBoth>(
      stream, sink, sms, clock_khz);
  const double larger = wgmma > alu ? wgmma : alu;
  const double smaller = wgmma > alu ? alu : wgmma;
  std::printf(
      "%-16s N=%-3d A from %-9s rounds %d %-13s wgmma %6.1f  ALU %6.1f  "
      "both %6.1f  cycles/step  (both: %3.0f%% of the way to the sum)\n",
      layout, kN, kSharedA ? "shared" : "registers", kRounds, kAluNames[kAlu],
      wgmma, alu, both, 100.0 * (both - larger) / smaller);
}

}  // namespace

int main() {
  const auto [prop, sms, clock_khz, stream, sink] = open_probe_gpu();
  std::printf("%s, %d SMs, %d MHz, 2 blocks per SM, %d steps per launch\n",
              prop.name, sms, clock_khz / 1000, kSteps);
  compare<32, false, 1, kAluDecode>("weights as A", stream, sink, sms,
                                    clock_khz);
  compare<32, true, 1, kAluDecode>("weights as A", stream, sink, sms,
                                   clock_khz);
  compare<32, true, 1, kAluDecodeStore>("weights as A", stream, sink, sms,
                                        clock_khz);
  compare<64, false, 1, kAluDecode>("weights as A", stream, sink, sms,
                                    clock_khz);
  compare<64, true, 1, kAluDecode>("weights as A", stream, sink, sms,
                                   clock_khz);
  compare<64, true, 1, kAluDecodeStore>("weights as A", stream, sink, sms,
                                        clock_khz);
  compare<128, false, 2, kAluDecode>("weights as B", stream, sink, sms,
                                     clock_khz);
  compare<128, false, 2, kAluDecodeStore>("weights as B", stream, sink, sms,
                                          clock_khz);
  compare<128, true, 2, kAluDecodeStore>("weights as B", stream, sink, sms,
                                         clock_khz);
  // Which pipe collides with the tensor core: the same wgmmas beside one
  // kind of operation at a time.
  compare<32, false, 1, kAluDecodeInt>("pipes", stream, sink, sms, clock_khz);
  compare<32, false, 1, kAluHalf>("pipes", stream, sink, sms, clock_khz);
  compare<32, false, 1, kAluFloat>("pipes", stream, sink, sms, clock_khz);
  compare<32, false, 1, kAluInt>("pipes", stream, sink, sms, clock_khz);
  compare<32, true, 1, kAluHalf>("pipes", stream, sink, sms, clock_khz);
  compare<32, true, 1, kAluFloat>("pipes", stream, sink, sms, clock_khz);
  compare<32, true, 1, kAluInt>("pipes", stream, sink, sms, clock_khz);
  compare<64, false, 1, kAluDecodeInt>("pipes", stream, sink, sms, clock_khz);
  compare<64, false, 1, kAluHalf>("pipes", stream, sink, sms, clock_khz);
  compare<64, false, 1, kAluFloat>("pipes", stream, sink, sms, clock_khz);
  compare<64, false, 1, kAluInt>("pipes", stream, sink, sms, clock_khz);
  return 0;
}
