#pragma once

// Kernel parameters of the GEMM family (hummingd_gemm) and of the weight
// repack (hummingd_repack). Plain C++, no device code, so host launchers
// pass the same layout to cuLaunchKernelEx.
//
// GemmArgs only grows at its end, and each layout is a launch ABI
// (kernels/launch_abi.h, the wire's KernelRequest.launch_abi): a client of
// an older ABI passes a shorter struct, so the planner never gives it a
// kernel that reads a field past its layout. Adding a field a kernel reads
// means a new ABI value there.

#include "arch/platform.cuh"

namespace hummingd {

// Y (M x N) = X (M x K) . W^T (+ bias). Buffers 16-byte aligned.
struct GemmArgs {
  const void* x;  // (M, K) activation dtype, row-major
  // Fragment-ordered codes (kernels/reference/gemm_layout.h), N*K*bits/32
  // words.
  const device::u32* weights;
  // Checkpoint layout (dequant_reference.h); for wgmma tiles built with
  // k-major scales (layout=kmajor, gemm/wgmma_config.cuh) the [column][row]
  // copy of it (kernels/k_major_scales.h), which only clients of launch ABI
  // kLaunchAbiKMajorScales (kernels/launch_abi.h) pass.
  const void* scales;
  const void* zero_points;       // as the scales; null without zero points
  const float* secondary_scale;  // (1) | (N) fp32; null without one
  const void* bias;              // (N) output dtype; null without bias
  void* y;                       // (M, N) output dtype, row-major
  // Split-K only (grid_z > 1; null otherwise), see schedule/split_k.cuh:
  // GemmWorkspaceBytes bytes of fp32 partials (no initialisation), and
  // GemmCounterBytes bytes of u32 arrival counters, zeroed once at
  // allocation and left zeroed by every launch. Launches sharing them must
  // be ordered (one stream).
  void* workspace;
  device::u32* split_counters;
  device::i64 m;
};

struct RepackArgs {
  const device::u32* checkpoint;  // (N, K*bits/32) words (weight_packing.h)
  device::u32* fragments;         // N*K*bits/32 words, fragment order
};

}  // namespace hummingd
