#pragma once

// Kernel parameters of the GEMM family (hummingd_gemm) and of the weight
// repack (hummingd_repack). Plain C++, no device code, so host launchers
// pass the same layout to cuLaunchKernelEx.
//
// GemmArgs keeps its v1 layout: cuLaunchKernelEx copies the kernel's
// parameter size from the client's struct, so a longer struct in new
// kernels would make every launch by an older client read past its own.
// What the pointers must hold for a kernel is the launch ABI
// (kernels/launch_abi.h, the wire's KernelRequest.launch_abi): a kernel
// that wants something else in an existing pointer (layout=kmajor: the
// scales' [column][row] copy in `scales`) is planned only for clients of a
// launch ABI that passes it.

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
