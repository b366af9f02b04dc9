#pragma once

// GEMM-family helpers for GPU tests: in-process resolution of a dense GEMM
// layer (plan -> stubs -> NVRTC) into launchable kernel sets for the GEMM
// and its weight repack, and test-local launchers (the client library's
// GEMM entry point is the lead's to add; these follow kernels/gemm_config.h
// and gemm/wna16_args.cuh).

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "hummingd/v1/kernel_service.pb.h"
#include "kernels/plan.h"

namespace hummingd::gpu::testing {

struct GemmLayerKernels {
  v1::KernelSet gemm;    // the M-range table
  v1::KernelSet repack;  // one kernel, every M
  Plan plan;             // for the workspace sizes (not in v1 yet)
  PlanEntry repack_entry;
};

// Memoized per (spec, n, k, arch).
absl::StatusOr<GemmLayerKernels> ResolveGemm(const std::string& spec_text,
                                             int64_t n, int64_t k,
                                             const std::string& arch);

struct GemmBuffers {
  CUdeviceptr x = 0;
  CUdeviceptr weights = 0;  // fragment order
  CUdeviceptr scales = 0;
  // The scales as [column][row] (TransposeScalesToKMajor) for group-scaled
  // specs without zero points; what their layout=kmajor tiles read.
  CUdeviceptr scales_k_major = 0;
  CUdeviceptr zero_points = 0;
  CUdeviceptr secondary_scale = 0;
  CUdeviceptr bias = 0;
  CUdeviceptr y = 0;
  CUdeviceptr workspace = 0;       // >= GemmWorkspaceBytes
  CUdeviceptr split_counters = 0;  // >= GemmCounterBytes, zeroed once
};

// The plan entry that serves `m` (OUT_OF_RANGE outside the table).
absl::StatusOr<const PlanEntry*> GemmEntryForM(const Plan& plan, int64_t m);

// FAILED_PRECONDITION when the kernel for `m` reads k-major scales that
// `buffers` lack (QuantizedLinear::Forward's rule, GemmScalesArgument).
absl::Status LaunchGemm(const LoadedKernelSet& set, const GemmBuffers& buffers,
                        int64_t m, CUstream stream);

absl::Status LaunchRepack(const LoadedKernelSet& set, CUdeviceptr checkpoint,
                          CUdeviceptr fragments, CUstream stream);

}  // namespace hummingd::gpu::testing
