#pragma once

// Kernel parameters of the quantize kernel (skeleton "quantize", entry
// hummingd_quantize). Plain C++ with no device code so that host launchers
// can include it. Output buffers follow the dequant contract
// (kernels/reference/dequant_reference.h).

#include "arch/platform.cuh"

namespace hummingd {

struct QuantizeArgs {
  // (N, K) row-major in the spec's activation dtype (fp16 or bf16).
  const void* input;
  // (N, K * bits / 32) little-endian bit stream per row.
  device::u32* weights;
  // Scale dtype, one element per scale entry.
  void* scales;
  // uint8 (integer) or activation dtype (float) per scale entry; null when
  // the spec has no zero point.
  void* zero_points;
  // fp32, (1) or (N), all written as 1.0; null when the spec has none.
  float* secondary_scale;
};

}  // namespace hummingd
