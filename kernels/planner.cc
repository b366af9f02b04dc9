#include "kernels/planner.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/gemm_config.h"
#include "kernels/gemm_decode_plan.h"
#include "kernels/gemm_prefill_plan.h"
#include "kernels/layer_shape.h"
#include "kernels/plan.h"
#include "kernels/quant_spec.h"

namespace hummingd {
namespace {

// The dequant kernel is memory bound and has a single shape of work (one
// 32-code chunk per thread), so one config serves every M and every GPU.
constexpr int kDequantThreads = 256;
constexpr int kDequantCodesPerThread = 32;

absl::StatusOr<Plan> PlanDequant(const KernelRequest& request) {
  const LayerShape& shape = request.shape;
  if (shape.n <= 0 || shape.k <= 0 || shape.k % kDequantCodesPerThread != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape: the dequant planner needs N > 0 and K a positive multiple of ",
        kDequantCodesPerThread, " (got N=", shape.n, ", K=", shape.k, ")"));
  }
  const int64_t chunks = shape.n * (shape.k / kDequantCodesPerThread);

  PlanEntry entry;
  entry.m_min = 1;
  entry.m_max = kDefaultMaxM;
  entry.config.family = KernelFamily::kDequant;
  entry.config.skeleton = "dequant";
  entry.config.text =
      absl::StrCat("threads=", kDequantThreads,
                   ",codes_per_thread=", kDequantCodesPerThread);
  entry.config.threads_per_block = kDequantThreads;
  entry.config.dynamic_shared_memory = 0;
  entry.launch.block_x = kDequantThreads;
  entry.launch.grid_x = (chunks + kDequantThreads - 1) / kDequantThreads;
  entry.launch.grid_y = 1;
  entry.launch.grid_z = 1;
  entry.launch.m_per_block_x = 0;  // the grid does not depend on M
  entry.launch.dynamic_shared_memory = 0;

  Plan plan;
  plan.entries.push_back(std::move(entry));
  return plan;
}

// Every planner entry point checks the spec and shape rules itself: tools
// and tests call it without the server's validation, and a group size of 0
// or an unaligned K reached a division or a plan of kernels that cannot
// exist. The server's own size cap is its business; the dimension limits
// still bound every product here.
absl::Status ValidatePlanRequest(const KernelRequest& request) {
  RETURN_IF_ERROR(ValidateSpec(request.spec));
  ShapeLimits limits;
  limits.max_weight_elements = std::numeric_limits<int64_t>::max();
  return ValidateShape(request.spec, request.shape, request.family, limits);
}

// ---- GEMM (WNA16, dense) ----

// Used when the request does not say (0): typical parts of each arch.
int DefaultSmCount(const GpuTarget& gpu) {
  if (gpu.sm >= 90) return 132;
  switch (gpu.sm) {
    case 75:
      return 40;
    case 86:
      return 84;
    case 87:
      return 16;
    case 89:
      return 128;
    default:
      return 108;
  }
}

int DefaultSharedOptin(const GpuTarget& gpu) {
  if (gpu.sm >= 90 && gpu.sm < 120) return 232448;
  switch (gpu.sm) {
    case 75:
      return 65536;
    case 80:
    case 87:
      return 166912;
    default:
      return 101376;
  }
}

// The M ranges of every GEMM plan and the tile family serving each: small M
// streams weights with one m16 row of fragments per warp; larger M reuses
// each decoded weight fragment over more rows.
struct GemmRange {
  int64_t m_min;
  int64_t m_max;
  int block_m;
  int warps_m;
  bool wide;                // BN up to 128 with 4 warps along N, else BN <= 64
  int split_target_factor;  // aim for factor * SMs blocks at m_min
};

constexpr GemmRange kGemmRanges[] = {
    {1, 16, 16, 1, false, 4},
    {17, 64, 64, 2, false, 4},
    {65, 256, 128, 2, true, 2},
    {257, 1024, 128, 2, true, 1},
    {1025, kDefaultMaxM, 128, 2, true, 0},
};

absl::StatusOr<GemmTileConfig> ChooseGemmTile(const GemmRange& range,
                                              const QuantSpec& spec,
                                              const LayerShape& shape,
                                              int smem_limit) {
  GemmTileConfig tile;
  tile.block_m = range.block_m;
  tile.warps_m = range.warps_m;
  tile.block_k = (range.block_m == 16 && shape.k % 128 == 0) ? 128 : 64;
  const int bn_options[] = {128, 64, 32, 16};
  tile.block_n = 0;
  for (int bn : bn_options) {
    if (!range.wide && bn > 64) continue;
    if (shape.n % bn == 0) {
      tile.block_n = bn;
      break;
    }
  }
  // Small M: one n16 unit per warp; otherwise 32 columns per warp.
  const int warp_n = range.block_m == 16 ? 16 : 32;
  tile.warps_n = std::max(1, tile.block_n / warp_n);
  tile.stages = 4;
  while (tile.stages > 2 && tile.SharedBytes(spec) > smem_limit) {
    --tile.stages;
  }
  if (tile.SharedBytes(spec) > smem_limit) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "gpu.max_shared_memory_per_block_optin: ", smem_limit,
        " bytes cannot hold two stages of ", FormatGemmTileText(tile)));
  }
  RETURN_IF_ERROR(ValidateGemmTile(tile, shape.n, shape.k));
  return tile;
}

absl::Status CheckGemmRequest(const KernelRequest& request) {
  const QuantSpec& spec = request.spec;
  const LayerShape& shape = request.shape;
  if (shape.kind != GemmKind::kDense) {
    return absl::UnimplementedError(
        "shape.kind: only dense GEMMs are planned so far");
  }
  if (spec.activation_type != DataType::kFp16 &&
      spec.activation_type != DataType::kBf16) {
    return absl::UnimplementedError(absl::StrCat(
        "spec.activation_type: the gemm family supports fp16 and bf16 "
        "activations so far (got ",
        DataTypeName(spec.activation_type), ")"));
  }
  if (spec.activation_scale != ActivationScaleMode::kNone) {
    return absl::UnimplementedError(
        "spec.activation_scale: 16-bit activations take no scale");
  }
  if (spec.output_type != DataType::kFp16 &&
      spec.output_type != DataType::kBf16) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.output_type: must be fp16 or bf16 (got ",
                     DataTypeName(spec.output_type), ")"));
  }
  RETURN_IF_ERROR(CheckGemmUnits(shape.n, shape.k));
  if (request.gpu.sm < 80 && spec.activation_type == DataType::kBf16) {
    return absl::InvalidArgumentError(
        absl::StrCat("gpu.arch: ", request.gpu.ArchName(),
                     " has no bf16 tensor cores; use act=fp16"));
  }
  return absl::OkStatus();
}

}  // namespace

int GemmSharedMemoryLimit(const GpuTarget& gpu) {
  // A reported figure above the arch's own is a wrong report: a kernel
  // planned for it would not launch.
  const int optin = gpu.max_shared_memory_per_block_optin > 0
                        ? std::min(gpu.max_shared_memory_per_block_optin,
                                   DefaultSharedOptin(gpu))
                        : DefaultSharedOptin(gpu);
  return optin - kGemmStaticSharedBytes;
}

namespace {

absl::StatusOr<Plan> PlanGemm(const KernelRequest& request) {
  RETURN_IF_ERROR(CheckGemmRequest(request));
  const QuantSpec& spec = request.spec;
  const LayerShape& shape = request.shape;
  const int sm_count = request.gpu.sm_count > 0 ? request.gpu.sm_count
                                                : DefaultSmCount(request.gpu);
  const int smem_limit = GemmSharedMemoryLimit(request.gpu);
  Plan plan;
  // Hopper serves M <= 64 with the wgmma decode kernels, and larger M with
  // their 64- and 128-token tiles where the layer takes them.
  const bool wgmma_decode = WgmmaDecodeApplies(request.gpu, spec, shape);
  if (wgmma_decode) {
    ASSIGN_OR_RETURN(
        plan.entries,
        PlanWgmmaDecode(spec, shape, sm_count, smem_limit, request.launch_abi));
    const std::vector<PlanEntry> prefill =
        PlanWgmmaPrefill(spec, shape, sm_count, smem_limit, request.launch_abi);
    if (!prefill.empty()) {
      plan.entries.insert(plan.entries.end(), prefill.begin(), prefill.end());
      return plan;
    }
  }
  for (const GemmRange& range : kGemmRanges) {
    if (wgmma_decode && range.m_max <= 64) continue;
    ASSIGN_OR_RETURN(const GemmTileConfig tile,
                     ChooseGemmTile(range, spec, shape, smem_limit));
    const int64_t n_blocks = shape.n / tile.block_n;
    const int64_t k_tiles = shape.k / tile.block_k;
    const int64_t blocks =
        (range.m_min + tile.block_m - 1) / tile.block_m * n_blocks;
    const int64_t target = int64_t{range.split_target_factor} * sm_count;
    int64_t splits = 1;
    if (blocks < target) {
      splits = (target + blocks - 1) / blocks;
      // Every split keeps at least two k-tiles so the pipeline has depth.
      splits =
          std::min<int64_t>({splits, 16, std::max<int64_t>(1, k_tiles / 2)});
    }
    plan.entries.push_back(MakeGemmPlanEntry(range.m_min, range.m_max, tile,
                                             spec, shape, splits, smem_limit));
  }
  return plan;
}

}  // namespace

absl::StatusOr<PlanEntry> PlanRepack(const KernelRequest& request) {
  if (request.family != KernelFamily::kGemm) {
    return absl::InvalidArgumentError(
        "family: weight repack belongs to the gemm family");
  }
  RETURN_IF_ERROR(ValidatePlanRequest(request));
  RETURN_IF_ERROR(CheckGemmRequest(request));
  const LayerShape& shape = request.shape;
  const int64_t lane_chunks =
      (shape.n / kGemmUnitN) * (shape.k / kGemmUnitK) * 32;
  PlanEntry entry;
  entry.m_min = 1;
  entry.m_max = kDefaultMaxM;
  entry.config.family = KernelFamily::kGemm;
  entry.config.skeleton = kRepackSkeleton;
  entry.config.text = absl::StrCat("threads=", kRepackThreads);
  entry.config.threads_per_block = kRepackThreads;
  entry.launch.block_x = kRepackThreads;
  entry.launch.grid_x = (lane_chunks + kRepackThreads - 1) / kRepackThreads;
  return entry;
}

absl::Status CheckQuantizeRequest(const KernelRequest& request) {
  const QuantSpec& spec = request.spec;
  const LayerShape& shape = request.shape;
  RETURN_IF_ERROR(ValidateSpec(spec));
  if (shape.kind != GemmKind::kDense) {
    return absl::UnimplementedError(
        "shape.kind: the quantize kernel takes dense weights only");
  }
  if (spec.activation_type != DataType::kFp16 &&
      spec.activation_type != DataType::kBf16) {
    return absl::UnimplementedError(absl::StrCat(
        "spec.activation_type: the quantize kernel reads fp16 or bf16 input "
        "(got ",
        DataTypeName(spec.activation_type), ")"));
  }
  if (shape.n <= 0 || shape.k <= 0 || shape.k % 32 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape: the quantize kernel needs N > 0 and K a positive multiple of "
        "32 (got N=",
        shape.n, ", K=", shape.k, ")"));
  }
  int64_t tile_n = 1;
  int64_t tile_k = shape.k;
  if (spec.granularity == ScaleGranularity::kGroup) {
    tile_k = spec.group_size;
  } else if (spec.granularity == ScaleGranularity::kBlock) {
    tile_n = spec.block_n;
    tile_k = spec.block_k;
  }
  if (shape.n % tile_n != 0 || shape.k % tile_k != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape: N=", shape.n, ", K=", shape.k,
        " must be multiples of the scale tile (", tile_n, " x ", tile_k, ")"));
  }
  return absl::OkStatus();
}

int64_t QuantizeJobs(const KernelRequest& request) {
  const QuantSpec& spec = request.spec;
  const LayerShape& shape = request.shape;
  switch (spec.granularity) {
    case ScaleGranularity::kGroup:
      return shape.n * (shape.k / std::max(spec.group_size, 32));
    case ScaleGranularity::kChannel:
      return shape.n;
    case ScaleGranularity::kBlock:
      return (shape.n / spec.block_n) * (shape.k / std::max(spec.block_k, 32));
    case ScaleGranularity::kTensor:
      return 1;
  }
  return 1;
}

absl::StatusOr<PlanEntry> PlanQuantize(const KernelRequest& request) {
  RETURN_IF_ERROR(CheckQuantizeRequest(request));
  constexpr int kWarpsPerBlock = kQuantizeThreads / 32;
  const int64_t jobs = QuantizeJobs(request);
  PlanEntry entry;
  entry.m_min = 1;
  entry.m_max = kDefaultMaxM;
  entry.config.family = request.family;
  entry.config.skeleton = kQuantizeSkeleton;
  entry.config.text = absl::StrCat("threads=", kQuantizeThreads);
  entry.config.threads_per_block = kQuantizeThreads;
  entry.launch.block_x = kQuantizeThreads;
  entry.launch.grid_x = (jobs + kWarpsPerBlock - 1) / kWarpsPerBlock;
  return entry;
}

std::string PlannerGpuFields(KernelFamily family, const GpuTarget& gpu) {
  switch (family) {
    case KernelFamily::kDequant:
      return absl::StrCat("arch=", gpu.ArchName());
    case KernelFamily::kGemm:
      // The split-K factor reads the SM count and the stage count the
      // shared-memory limit (0 = per-arch default).
      return absl::StrCat(
          "arch=", gpu.ArchName(), ",sm_count=", gpu.sm_count,
          ",smem_optin=", gpu.max_shared_memory_per_block_optin);
  }
  return absl::StrCat("arch=", gpu.ArchName());
}

uint32_t PlanKeyLaunchAbi(const KernelRequest& request) {
  switch (request.family) {
    case KernelFamily::kDequant:
      return kLaunchAbiOriginal;
    case KernelFamily::kGemm:
      return request.launch_abi;
  }
  return request.launch_abi;
}

absl::StatusOr<Plan> PlanKernels(const KernelRequest& request) {
  RETURN_IF_ERROR(ValidatePlanRequest(request));
  switch (request.family) {
    case KernelFamily::kDequant:
      return PlanDequant(request);
    case KernelFamily::kGemm:
      return PlanGemm(request);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("family: unknown value ", static_cast<int>(request.family)));
}

}  // namespace hummingd
