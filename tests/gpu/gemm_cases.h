#pragma once

// The GEMM GPU suite's cases (gemm_gpu_test.cc) and the M values each runs;
// gemm_case_grid_test.cc checks them against the planner without a GPU.

#include <cstdint>
#include <ostream>
#include <vector>

namespace hummingd::gpu::testing {

// Which M values a case runs: every range of its plan (kSmall), or, for a
// real layer, fewer (kLarge: no M past 1024) or M up to 4096.
// kDecode: the M <= 64 ranges only, at every boundary of Hopper's wgmma
// decode plan (1-8, split at 5 | 6 where a tile takes early=1 from M = 6,
// 9-16, 17-32, 33-64).
enum GemmMSet { kSmall, kLarge, kLargeWithM4096, kDecode };

struct GemmCase {
  const char* spec;
  int64_t n;
  int64_t k;
  GemmMSet m_set;
};

void PrintTo(const GemmCase& c, std::ostream* os);

// M = 1, 16, 17, 64 everywhere, 7, 100, 257 and 1000 in every set but
// kDecode (its own ten, M <= 64), and more per set (see gemm_cases.cc).
std::vector<int64_t> MValues(GemmMSet m_set);

// The covering grid (issue 4): every weight format x every scale
// granularity x every scale dtype x both 16-bit activation / output types,
// plus secondary scales, zero points and bias, each pair of options met in
// at least one case (not the full product). Shapes: the smallest legal
// (16 x 64), odd multiples of the units (48 x 192, 80 x 320, ...) and real
// layers (4096 x 4096, 6144 x 4096) for a few cases only (the fp64
// reference is the cost).
const std::vector<GemmCase>& CoveringCases();

// Every spec of the grid again on a layer whose N is a multiple of 64, so
// that on Hopper each format runs through the wgmma decode kernels at
// M <= 64, plus real layers that reach the planner's rules small layers
// never get (each named beside the list, gemm_cases.cc).
std::vector<GemmCase> DecodeCases();

}  // namespace hummingd::gpu::testing
