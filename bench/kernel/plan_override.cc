#include "bench/kernel/plan_override.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/hashing.h"
#include "common/status_macros.h"
#include "kernels/codegen.h"
#include "kernels/gemm_decode_plan.h"
#include "kernels/nvrtc_compiler.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"
#include "server/proto_convert.h"

namespace hummingd::bench {

absl::StatusOr<std::vector<PlanOverride>> ParsePlanOverrides(
    absl::string_view text) {
  std::vector<PlanOverride> overrides;
  for (absl::string_view item : absl::StrSplit(text, ';', absl::SkipEmpty())) {
    const std::vector<absl::string_view> parts = absl::StrSplit(item, ':');
    PlanOverride entry;
    if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &entry.m_max) ||
        entry.m_max < 1 || !absl::SimpleAtoi(parts[2], &entry.splits) ||
        entry.splits < 1 || entry.splits > 16) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--override: expected M_MAX:TILE_TEXT:SPLITS (splits 1..16), got '",
          item, "'"));
    }
    ASSIGN_OR_RETURN(entry.tile, ParseGemmTileText(std::string(parts[1])));
    overrides.push_back(entry);
  }
  return overrides;
}

absl::Status ValidatePlanOverride(const KernelRequest& request,
                                  const PlanOverride& override_entry) {
  RETURN_IF_ERROR(
      ValidateGemmTile(override_entry.tile, request.shape.n, request.shape.k));
  // The set's launcher must handle the tile (e.g. pass the k-major copy
  // as GemmArgs::scales for layout=kmajor, read ksplit=S or 128 tokens).
  const uint32_t tile_abi = GemmTileLaunchAbi(override_entry.tile);
  if (request.launch_abi < tile_abi) {
    return absl::InvalidArgumentError(
        absl::StrCat("--override: '", FormatGemmTileText(override_entry.tile),
                     "' needs launch ABI ", tile_abi,
                     " or later (the request has ", request.launch_abi, ")"));
  }
  // The kernel would refuse it at compile time (a static_assert); say so
  // as a bad argument, before NVRTC.
  if (override_entry.tile.k_major_scales &&
      !WgmmaTakesKMajorScales(override_entry.tile, request.spec,
                              request.shape.k)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--override: layout=kmajor needs one scale per row (group or "
        "channel scales) and no zero points; ",
        FormatSpecText(request.spec), " has other scales"));
  }
  if (override_entry.tile.warp_run_weights &&
      !WgmmaTakesWarpRunWeights(override_entry.tile, request.spec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--override: copy=warprun needs weight runs that hold whole warps' "
        "shares of the stage's 16-byte chunks (",
        FormatGemmTileText(override_entry.tile), " with ",
        FormatSpecText(request.spec), " has not)"));
  }
  // k-split warps sum their slices in the block: nothing meets partials.
  if (override_entry.tile.warp_split_k > 1 && override_entry.splits != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--override: ksplit tiles run unsplit (got ",
                     override_entry.splits, " splits)"));
  }
  // The kernel would refuse it at compile time (a static_assert).
  if (!WgmmaKSplitHoldsScalePeriods(override_entry.tile, request.spec,
                                    request.shape.k)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--override: each ksplit warp's slice (BK / S columns) must hold "
        "whole scale groups of ",
        FormatSpecText(request.spec)));
  }
  // The driver would refuse the launch's shared memory on the device
  // (cuKernelSetAttribute), after the sweep's machine time began.
  const int shared_bytes = override_entry.tile.SharedBytes(request.spec);
  const int shared_limit = GemmSharedMemoryLimit(request.gpu);
  if (shared_bytes > shared_limit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--override: '", FormatGemmTileText(override_entry.tile), "' needs ",
        shared_bytes, " bytes of shared memory per block with ",
        FormatSpecText(request.spec), "; ", request.gpu.ArchName(), " allows ",
        shared_limit));
  }
  return absl::OkStatus();
}

absl::StatusOr<CompiledOverride> CompilePlanOverride(
    const KernelRequest& request, const PlanOverride& override_entry,
    int64_t m_min, int64_t m_max) {
  RETURN_IF_ERROR(ValidatePlanOverride(request, override_entry));
  CompiledOverride out;
  out.entry = MakeGemmPlanEntry(m_min, m_max, override_entry.tile, request.spec,
                                request.shape, override_entry.splits,
                                GemmSharedMemoryLimit(request.gpu));
  ASSIGN_OR_RETURN(const KernelSource source,
                   GenerateStub(request, out.entry.config));
  ASSIGN_OR_RETURN(out.kernel, CompileKernel(source, request.gpu));
  return out;
}

namespace {

// A set carries each cubin once, in the first kernel that uses it: before
// `replaced` loses its cubin to an override, the next kernel of the same
// artifact takes it.
void HandOnSharedCubin(const v1::Kernel& replaced, v1::KernelSet& set) {
  if (replaced.cubin().empty()) return;
  for (v1::Kernel& other : *set.mutable_kernels()) {
    if (&other != &replaced && other.cubin().empty() &&
        other.artifact_key() == replaced.artifact_key()) {
      other.set_cubin(replaced.cubin());
      return;
    }
  }
}

// Planner v40 plans some decode ranges as two entries of one tile, the
// upper one with early=1 (M = 1-5 and 6-8): `lower` is `upper`'s partner
// when it ends just below it and runs the same tile without the option.
bool IsEarlySplitPartner(const v1::Kernel& lower, const v1::Kernel& upper) {
  if (lower.m_max() + 1 != upper.m_min()) return false;
  absl::StatusOr<GemmTileConfig> lower_tile = ParseGemmTileText(lower.config());
  absl::StatusOr<GemmTileConfig> upper_tile = ParseGemmTileText(upper.config());
  if (!lower_tile.ok() || !upper_tile.ok()) return false;
  if (lower_tile->early_tiles != 0 || upper_tile->early_tiles == 0) {
    return false;
  }
  upper_tile->early_tiles = 0;
  return *lower_tile == *upper_tile &&
         lower.launch().grid_z() == upper.launch().grid_z();
}

}  // namespace

absl::Status ApplyPlanOverrides(const KernelRequest& request,
                                const std::vector<PlanOverride>& overrides,
                                v1::KernelSet& set) {
  // The ends the text names: a split range's lower entry named too is
  // overridden on its own, whatever the order.
  std::vector<int64_t> named_ends;
  for (const PlanOverride& override_entry : overrides) {
    named_ends.push_back(override_entry.m_max);
  }
  for (const PlanOverride& override_entry : overrides) {
    int index = -1;
    for (int i = 0; i < set.kernels_size(); ++i) {
      if (set.kernels(i).m_max() == override_entry.m_max) index = i;
    }
    if (index < 0) {
      std::vector<int64_t> ends;
      for (const v1::Kernel& candidate : set.kernels()) {
        ends.push_back(candidate.m_max());
      }
      return absl::NotFoundError(absl::StrCat(
          "--override: no M range of the plan ends at ", override_entry.m_max,
          " (its ranges end at ", absl::StrJoin(ends, ", "), ")"));
    }
    // Otherwise the override takes the whole planned range: a split range's
    // lower entry goes with it.
    const bool takes_lower =
        index > 0 &&
        std::find(named_ends.begin(), named_ends.end(),
                  set.kernels(index - 1).m_max()) == named_ends.end() &&
        IsEarlySplitPartner(set.kernels(index - 1), set.kernels(index));
    const int64_t m_min = takes_lower ? set.kernels(index - 1).m_min()
                                      : set.kernels(index).m_min();
    // Compiled (and checked) before the set changes.
    ASSIGN_OR_RETURN(CompiledOverride compiled_override,
                     CompilePlanOverride(request, override_entry, m_min,
                                         set.kernels(index).m_max()));
    if (takes_lower) {
      HandOnSharedCubin(set.kernels(index - 1), set);
      set.mutable_kernels()->DeleteSubrange(index - 1, 1);
      --index;
    }
    v1::Kernel* kernel = set.mutable_kernels(index);
    const PlanEntry& entry = compiled_override.entry;
    CompiledKernel& compiled = compiled_override.kernel;

    HandOnSharedCubin(*kernel, set);
    PlanRecordEntry record_entry;
    record_entry.m_min = entry.m_min;
    record_entry.m_max = entry.m_max;
    record_entry.config = entry.config;
    record_entry.launch = entry.launch;
    record_entry.artifact_key =
        Sha256Hex(absl::StrCat("bench-override|", FormatSpecText(request.spec),
                               "|", request.shape.n, "x", request.shape.k, "|",
                               entry.config.text, "|", request.gpu.ArchName()));
    ArtifactRecord artifact;
    artifact.cubin = std::move(compiled.cubin);
    artifact.entry = compiled.entry;
    artifact.threads_per_block = entry.config.threads_per_block;
    artifact.dynamic_shared_memory = entry.config.dynamic_shared_memory;
    artifact.compile_ms = compiled.compile_ms;
    artifact.toolchain = kernel->toolchain();
    artifact.arch = request.gpu.ArchName();
    artifact.cubin_checksum = Checksum64(artifact.cubin);
    FillKernelProto(record_entry, artifact, v1::CACHE_OUTCOME_COMPILED,
                    /*with_cubin=*/true, kernel);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<PlanOverride>> WgmmaCopyOverrides(
    const v1::KernelSet& set, bool bulk) {
  std::vector<PlanOverride> overrides;
  for (const v1::Kernel& kernel : set.kernels()) {
    ASSIGN_OR_RETURN(GemmTileConfig tile, ParseGemmTileText(kernel.config()));
    // k-split warps copy their weights by cp.async only: kept as planned.
    if (tile.mma != GemmMma::kWgmma || tile.warp_split_k > 1) continue;
    tile.bulk_weights = bulk;
    // Warp-run slots are a cp.async layout: bulk copies replace them.
    tile.warp_run_weights = tile.warp_run_weights && !bulk;
    overrides.push_back(
        PlanOverride{kernel.m_max(), tile, kernel.launch().grid_z()});
  }
  return overrides;
}

}  // namespace hummingd::bench
