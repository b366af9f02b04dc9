// Compile-only probe (no GPU): does ptxas keep a wgmma in flight while
// ordinary instructions read a *different* accumulator set? That is what
// double-buffered deferred-scale partials need (fold period p's partials
// while period p + 1's wgmmas run into the other set; decode-notes v90).
// Build the cubin and look at the wait after each HGMMA:
//
//   nvcc -std=c++17 -cubin -arch=sm_90a -Ikernels/device \
//       bench/probes/wgmma_fold_overlap_probe.cu -o fold.cubin
//   nvdisasm fold.cubin | grep -E "HGMMA|DEPBAR"
//
// With -DHUMMINGD_PROBE_NO_FOLD the loop reads no accumulator and ptxas keeps
// `WARPGROUP.DEPBAR.LE gsb0, 0x1` (one in flight); with the fold it drains
// to `0x0` after every wgmma (CUDA 13.0, 2026-12-02): the fold of the other
// set serializes the tensor pipe, so double buffering buys nothing here.

#include "arch/wgmma.cuh"

namespace hd = hummingd::device;

extern "C" __global__ void __launch_bounds__(128, 1)
    fold_overlap_probe(const unsigned* g_a, float* g_out,
                       unsigned long long desc, int periods, float scale) {
  float r_part[2][16];
  float r_total[16];
  for (int i = 0; i < 16; ++i) {
    r_part[0][i] = r_part[1][i] = 0.0f;
    r_total[i] = 0.0f;
  }
  unsigned r_a[4];
  for (int i = 0; i < 4; ++i) r_a[i] = g_a[threadIdx.x * 4 + i];
  for (int p = 0; p < periods; ++p) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // Period 2p + h accumulates into set h in two k16 steps.
      hd::wgmma_fence();
      hd::wgmma_rs<32, hd::ScalarType::kFp16, false>(r_part[h], r_a, desc + h);
      hd::wgmma_commit();
      hd::wgmma_fence();
      hd::wgmma_rs<32, hd::ScalarType::kFp16, true>(r_part[h], r_a,
                                                    desc + 2 + h);
      hd::wgmma_commit();
      hd::wgmma_wait<1>();
#pragma unroll
      for (int i = 0; i < 16; ++i) {
#if defined(HUMMINGD_PROBE_NO_FOLD)
        r_total[i] =
            __fmaf_rn(scale, static_cast<float>(r_a[i & 3]), r_total[i]);
#else
        // The other set's period, whose wgmmas retired before this one's.
        hd::wgmma_fence_operand(r_part[h ^ 1][i]);
        r_total[i] = __fmaf_rn(scale, r_part[h ^ 1][i], r_total[i]);
#endif
      }
      for (int i = 0; i < 4; ++i) r_a[i] = r_a[i] * 3u + 1u;
    }
  }
  hd::wgmma_wait<0>();
  for (int i = 0; i < 16; ++i) {
    g_out[threadIdx.x * 16 + i] = r_total[i] + r_part[0][i] + r_part[1][i];
  }
}
