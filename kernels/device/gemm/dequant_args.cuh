#pragma once

// Kernel parameters of the dequant family. Plain C++ with no device code so
// that host launchers can include it and pass the same layout to
// cuLaunchKernel. All buffers are row-major and 16-byte aligned.

#include "arch/platform.cuh"

namespace hummingd {

struct DequantArgs {
  // (N, K * bits / 32) little-endian bit stream per row.
  const device::u32* weights;
  // Scale dtype; (N, K/group) | (N) | (N/block_n, K/block_k) | (1).
  const void* scales;
  // Same shape as the scales: uint8 (integer) or the activation dtype
  // (float); null when the spec has no zero point.
  const void* zero_points;
  // fp32: (1) or (N); null when the spec has no secondary scale.
  const float* secondary_scale;
  // (N, K) fp16 or bf16.
  void* output;
};

}  // namespace hummingd
