#pragma once

// The kernel-argument layout a client passes to GEMM kernels (the wire's
// KernelRequest.launch_abi). A client built before a layout change passes
// the older, shorter struct; the driver copies the kernel's parameter size
// from the client's pointer, so a kernel that reads a newer field would read
// past the client's struct. The planner therefore emits only kernels the
// request's layout can launch (kernels/gemm_decode_plan.h), and the value is
// part of a GEMM plan key (kernels/planner.h, PlanKeyLaunchAbi).
//
// Header-only and dependency-free: the daemon, the clients (C++ SDK,
// hummingctl, bench, tests) and the comment on
// kernels/device/gemm/wna16_args.cuh all refer to these values.

#include <cstdint>

namespace hummingd {

// 0 (absent on the wire: clients before the field): the original GemmArgs,
// ending at `m`; no layout=kmajor tiles.
inline constexpr uint32_t kLaunchAbiOriginal = 0;
// GemmArgs with `scales_k_major` at its end; the client prepares k-major
// scale copies (kernels/k_major_scales.h), so layout=kmajor tiles may be
// planned.
inline constexpr uint32_t kLaunchAbiKMajorScales = 1;
// What this build's launchers (QuantizedLinear, LaunchKernel) pass. Bump
// it, with a new constant above, whenever GemmArgs gains a field a planned
// kernel reads; requests above it are refused (INVALID_ARGUMENT).
inline constexpr uint32_t kCurrentLaunchAbi = kLaunchAbiKMajorScales;

}  // namespace hummingd
