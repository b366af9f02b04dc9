#include "kernels/planner.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kernels/layer_shape.h"
#include "kernels/plan.h"

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

}  // namespace

std::string PlannerGpuFields(KernelFamily family, const GpuTarget& gpu) {
  switch (family) {
    case KernelFamily::kDequant:
      return absl::StrCat("arch=", gpu.ArchName());
    case KernelFamily::kGemm:
      // Not planned yet; when it is, it will also read the SM count and the
      // shared-memory limit, and they must then be keyed.
      return absl::StrCat(
          "arch=", gpu.ArchName(), ",sm_count=", gpu.sm_count,
          ",smem_optin=", gpu.max_shared_memory_per_block_optin);
  }
  return absl::StrCat("arch=", gpu.ArchName());
}

absl::StatusOr<Plan> PlanKernels(const KernelRequest& request) {
  switch (request.family) {
    case KernelFamily::kDequant:
      return PlanDequant(request);
    case KernelFamily::kGemm:
      return absl::UnimplementedError(
          "family: the gemm kernel family has no planner yet");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("family: unknown value ", static_cast<int>(request.family)));
}

}  // namespace hummingd
