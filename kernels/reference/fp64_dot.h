#pragma once

// The fp64 dot product the GEMM references use (the GPU tests' full
// reference and the benchmark's sampled one): float products are exact in
// fp64, and four independent sums let the adds pipeline. Summation order:
// four strided partial sums over the multiples of four, the tail into the
// first, then (s0 + s1) + (s2 + s3).

#include <cstdint>

namespace hummingd {

inline double Fp64Dot(const float* a, const float* b, int64_t k) {
  double sum[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= k; i += 4) {
    for (int j = 0; j < 4; ++j) {
      sum[j] += static_cast<double>(a[i + j]) * static_cast<double>(b[i + j]);
    }
  }
  for (; i < k; ++i) {
    sum[0] += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  }
  return (sum[0] + sum[1]) + (sum[2] + sum[3]);
}

}  // namespace hummingd
