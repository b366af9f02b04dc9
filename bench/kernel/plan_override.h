#pragma once

// Tuning knob of hummingd_gemm_bench: replace the planner's choice for
// some M ranges of a GEMM kernel set with explicit tiles and split-K
// factors, compiled here, so that one run on a GPU can time several
// candidate configs of a layer side by side (the planner then encodes the
// winner). Text form, ';'-separated: "M_MAX:TILE_TEXT:SPLITS", e.g.
//   "16:tile=16x256x64,warps=1x8,stages=6,mma=wgmma:4"
// replaces the plan's range that ends at M = 16. Where planner v40 plans a
// range as two entries of one tile (M = 1-5, and 6-8 with early=1), "8:"
// replaces both, unless the text also names "5:": then each its own.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hummingd/v1/kernel_service.pb.h"
#include "kernels/gemm_config.h"
#include "kernels/nvrtc_compiler.h"
#include "kernels/plan.h"

namespace hummingd::bench {

struct PlanOverride {
  int64_t m_max = 0;
  GemmTileConfig tile;
  int64_t splits = 1;
};

// INVALID_ARGUMENT naming the bad part; an empty text is no override.
absl::StatusOr<std::vector<PlanOverride>> ParsePlanOverrides(
    absl::string_view text);

// What ApplyPlanOverrides checks of an override before compiling it, as a
// bad argument naming the rule: the tile is legal for the layer, the
// request's launch ABI runs it, layout=kmajor has one scale per row and no
// zero points, and k-split warps run unsplit with whole scale groups in
// each warp's slice (rules the kernel would otherwise refuse in a
// static_assert). Also used to compile-check sweep files without a GPU
// (hummingd_planned_cubins --sweep).
absl::Status ValidatePlanOverride(const KernelRequest& request,
                                  const PlanOverride& override_entry);

// An override's kernel for the M range [m_min, m_max]: checked
// (ValidatePlanOverride), planned with the launch the planner would give
// its tile (MakeGemmPlanEntry) and compiled (NVRTC, no GPU needed).
struct CompiledOverride {
  PlanEntry entry;
  CompiledKernel kernel;
};
absl::StatusOr<CompiledOverride> CompilePlanOverride(
    const KernelRequest& request, const PlanOverride& override_entry,
    int64_t m_min, int64_t m_max);

// In `set` (a GEMM kernel set resolved for `request`), the kernel of every
// overridden range is replaced by one compiled here from the override's
// tile and split-K factor, with the launch the planner would give that
// tile (MakeGemmPlanEntry); a range planned as two entries (early=1 from
// inside it) becomes one unless both ends are named. Each override is
// compiled before the set changes. NOT_FOUND when no range ends at m_max; the
// tile is validated against the layer and the GPU by codegen; layout=kmajor
// needs request.launch_abi >= kLaunchAbiKMajorScales (INVALID_ARGUMENT).
absl::Status ApplyPlanOverrides(const KernelRequest& request,
                                const std::vector<PlanOverride>& overrides,
                                v1::KernelSet& set);

// Overrides that keep every wgmma range of `set` (its tile and split-K
// factor) but copy its weights with bulk copies (bulk) or per-thread
// cp.async (!bulk): --wgmma_copy, to A/B the two copy paths over whole
// tables. INVALID_ARGUMENT when a kernel's config text does not parse.
absl::StatusOr<std::vector<PlanOverride>> WgmmaCopyOverrides(
    const v1::KernelSet& set, bool bulk);

}  // namespace hummingd::bench
