#pragma once

// Planner: (family, spec, shape, GPU) -> M-range table. Deterministic: the same
// request always yields the same plan.

#include <string>

#include "absl/status/statusor.h"
#include "kernels/plan.h"

namespace hummingd {

// Bumped whenever planning logic changes what it emits; part of the plan key.
inline constexpr int kPlannerVersion = 1;

// The largest M a default plan covers.
inline constexpr int64_t kDefaultMaxM = int64_t{1} << 20;

// Canonical text of exactly the GPU fields the planner reads for this family
// (e.g. "arch=sm_90a" for dequant); the plan key records this and nothing else
// of the GPU.
std::string PlannerGpuFields(KernelFamily family, const GpuTarget& gpu);

// Requires a validated request. UNIMPLEMENTED for families not built yet.
// kGemm (dense, WNA16): five M ranges (1-16, 17-64, 65-256, 257-1024,
// 1025+), the last three sharing one tile config; grid = (ceil(M / BM),
// N / BN, split-K); split-K entries need GemmWorkspaceBytes(entry, M) of
// workspace and GemmCounterBytes(entry, M) of zeroed counters
// (kernels/gemm_config.h).
absl::StatusOr<Plan> PlanKernels(const KernelRequest& request);

// The weight repack kernel of a kGemm request (checkpoint layout ->
// fragment order, skeleton "repack", entry hummingd_repack): one kernel for
// every M, grid independent of M. Same preconditions as PlanKernels.
absl::StatusOr<PlanEntry> PlanRepack(const KernelRequest& request);

}  // namespace hummingd
