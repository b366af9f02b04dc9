#pragma once

// Planner: (family, spec, shape, GPU) -> M-range table. Deterministic: the same
// request always yields the same plan.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/plan.h"

namespace hummingd {

// Bumped whenever planning logic changes what it emits; part of the plan key.
inline constexpr int kPlannerVersion = 77;

// The dynamic shared memory a GEMM block may opt into on `gpu` (what the
// planner fits tiles into): the target's own figure, else the arch's, less
// the kernels' static bytes (kGemmStaticSharedBytes), which the opt-in
// limit counts too.
int GemmSharedMemoryLimit(const GpuTarget& gpu);

// Canonical text of exactly the GPU fields the planner reads for this family
// (e.g. "arch=sm_90a" for dequant); the plan key records this and nothing else
// of the GPU.
std::string PlannerGpuFields(KernelFamily family, const GpuTarget& gpu);

// The launch ABI as a plan key records it: the request's for kGemm, 0 for
// dequant (its kernels take no GemmArgs). Always recorded for GEMM rather
// than only where it changes today's plan (the sm_90 wgmma decode ranges):
// the ABI is how the client passes every GEMM kernel its arguments, and a
// key that tried to mirror which plans it affects would be a second copy of
// the planner's rules, wrong as soon as they change. The cost is one more
// plan record per ABI for layers where the plans coincide; their artifacts
// are shared.
uint32_t PlanKeyLaunchAbi(const KernelRequest& request);

// Validates the spec and shape itself (INVALID_ARGUMENT naming the field;
// no size cap: that is the caller's). UNIMPLEMENTED for families not built
// yet.
// kGemm (dense, WNA16): five M ranges (1-16, 17-64, 65-256, 257-1024,
// 1025+), the last three sharing one tile config; on sm_90a (N a multiple
// of 64) M <= 64 is served instead by four wgmma decode ranges (1-8, 9-16,
// 17-32, 33-64; kernels/gemm_decode_plan.h, whose layout=kmajor tiles
// need request.launch_abi >= kLaunchAbiKMajorScales), and, where N and K
// are multiples of 128, M > 64 by 64-token wgmma tiles in steps of 64
// tokens to 2048, then 2049+ (kernels/gemm_prefill_plan.h;
// 128-token tiles above 128 where 0.9 x their busiest SM's work is at
// most the 64-token grid's, for request.launch_abi >=
// kLaunchAbiPrefillTiles, and 256-token ones above 960 for
// kLaunchAbiTokenTiles256; neighbouring steps of 64 tokens merge);
// grid = (ceil(M / BM), N / BN, split-K); split-K entries need
// GemmWorkspaceBytes(entry, M) of workspace and GemmCounterBytes(entry, M) of
// zeroed counters (kernels/gemm_config.h).
absl::StatusOr<Plan> PlanKernels(const KernelRequest& request);

// The weight repack kernel of a kGemm request (checkpoint layout ->
// fragment order, skeleton "repack", entry hummingd_repack): one kernel for
// every M, grid independent of M. Same preconditions as PlanKernels.
absl::StatusOr<PlanEntry> PlanRepack(const KernelRequest& request);

// The quantize-from-float kernel (device/pack/quantize.cuh): dense (N, K)
// input in the spec's activation dtype -> the dequant buffer contract,
// byte-identical to ReferenceQuantize. One warp per scale entry (two for
// 16-wide groups), kQuantizeThreads / 32 warps per block.
inline constexpr char kQuantizeSkeleton[] = "quantize";
inline constexpr char kQuantizeEntry[] = "hummingd_quantize";
inline constexpr int kQuantizeThreads = 128;

// What PlanQuantize and the quantize stub require of a request of either
// family: a valid spec; a dense shape with N > 0, K a positive multiple of
// 32 and both multiples of the scale tile (INVALID_ARGUMENT); fp16 or bf16
// activations, the input dtype (UNIMPLEMENTED otherwise).
absl::Status CheckQuantizeRequest(const KernelRequest& request);

// Warps (jobs) the quantize kernel launches for a checked request.
int64_t QuantizeJobs(const KernelRequest& request);

// One kernel for every M (skeleton "quantize", config "threads=128"), grid
// independent of M; config.family is the request's family.
absl::StatusOr<PlanEntry> PlanQuantize(const KernelRequest& request);

}  // namespace hummingd
