#include "tests/gpu/gemm_support.h"

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/hashing.h"
#include "common/status_macros.h"
#include "gemm/wna16_args.cuh"
#include "hummingd/gpu/quantized_linear.h"
#include "kernels/codegen.h"
#include "kernels/gpu_target.h"
#include "kernels/launch_abi.h"
#include "kernels/nvrtc_compiler.h"
#include "kernels/planner.h"
#include "tests/gpu/gpu_test_support.h"

namespace hummingd::gpu::testing {
namespace {

absl::StatusOr<GemmLayerKernels> Resolve(const std::string& spec_text,
                                         int64_t n, int64_t k,
                                         const std::string& arch) {
  ASSIGN_OR_RETURN(QuantSpec spec, ParseSpecText(spec_text));
  RETURN_IF_ERROR(ValidateSpec(spec));
  KernelRequest request;
  request.family = KernelFamily::kGemm;
  request.spec = spec;
  request.shape.n = n;
  request.shape.k = k;
  RETURN_IF_ERROR(
      ValidateShape(spec, request.shape, request.family, ShapeLimits{}));
  ASSIGN_OR_RETURN(request.gpu, ParseGpuArch(arch));
  // The planner reads these; a test plans for the device it runs on.
  request.gpu.sm_count = TestDevice().sm_count;
  request.gpu.max_shared_memory_per_block_optin =
      TestDevice().max_shared_memory_per_block_optin;
  // LaunchGemm passes it as GemmArgs::scales to layout=kmajor kernels.
  request.launch_abi = kCurrentLaunchAbi;
  GemmLayerKernels out;
  ASSIGN_OR_RETURN(out.plan, PlanKernels(request));
  ASSIGN_OR_RETURN(out.repack_entry, PlanRepack(request));
  for (v1::KernelSet* set : {&out.gemm, &out.repack}) {
    set->set_canonical_spec(FormatSpecText(spec));
    // As a daemon sends them (QuantizedLinear::Create checks the family,
    // LoadedKernelSet::Load the launch ABI).
    set->set_family(v1::KERNEL_FAMILY_GEMM);
    set->set_launch_abi(request.launch_abi);
    set->set_plan_key(Sha256Hex(
        absl::StrCat("test-gemm-plan|", set == &out.gemm ? "gemm" : "repack",
                     "|", set->canonical_spec(), "|", n, "|", k, "|", arch)));
  }
  RETURN_IF_ERROR(AppendCompiledKernels(request, out.plan.entries, out.gemm));
  RETURN_IF_ERROR(
      AppendCompiledKernels(request, {out.repack_entry}, out.repack));
  return out;
}

}  // namespace

absl::StatusOr<GemmLayerKernels> ResolveGemm(const std::string& spec_text,
                                             int64_t n, int64_t k,
                                             const std::string& arch) {
  static std::mutex* const mu = new std::mutex;
  static auto* const memo =
      new std::map<std::tuple<std::string, int64_t, int64_t, std::string>,
                   GemmLayerKernels>;
  const auto key = std::make_tuple(spec_text, n, k, arch);
  {
    std::lock_guard<std::mutex> lock(*mu);
    auto it = memo->find(key);
    if (it != memo->end()) return it->second;
  }
  ASSIGN_OR_RETURN(GemmLayerKernels kernels, Resolve(spec_text, n, k, arch));
  std::lock_guard<std::mutex> lock(*mu);
  memo->emplace(key, kernels);
  return kernels;
}

absl::StatusOr<const PlanEntry*> GemmEntryForM(const Plan& plan, int64_t m) {
  if (const PlanEntry* entry = plan.EntryFor(m)) return entry;
  return absl::OutOfRangeError(absl::StrCat("m=", m, " is outside the plan"));
}

absl::Status LaunchGemm(const LoadedKernelSet& set, const GemmBuffers& buffers,
                        int64_t m, CUstream stream) {
  ASSIGN_OR_RETURN(const LoadedKernel* kernel, set.ForM(m));
  GemmArgs args;
  args.x = reinterpret_cast<const void*>(buffers.x);
  args.weights = reinterpret_cast<const device::u32*>(buffers.weights);
  args.zero_points = reinterpret_cast<const void*>(buffers.zero_points);
  args.secondary_scale =
      reinterpret_cast<const float*>(buffers.secondary_scale);
  args.bias = reinterpret_cast<const void*>(buffers.bias);
  args.y = reinterpret_cast<void*>(buffers.y);
  args.workspace = reinterpret_cast<void*>(buffers.workspace);
  args.split_counters = reinterpret_cast<device::u32*>(buffers.split_counters);
  args.m = m;
  ASSIGN_OR_RETURN(args.scales,
                   GemmScalesArgument(set.spec(), *kernel, buffers.scales,
                                      buffers.scales_k_major));
  return LaunchKernel(set, *kernel, m, &args, stream);
}

absl::Status LaunchRepack(const LoadedKernelSet& set, CUdeviceptr checkpoint,
                          CUdeviceptr fragments, CUstream stream) {
  RepackArgs args;
  args.checkpoint = reinterpret_cast<const device::u32*>(checkpoint);
  args.fragments = reinterpret_cast<device::u32*>(fragments);
  return LaunchKernel(set, set.kernels().front(), 1, &args, stream);
}

}  // namespace hummingd::gpu::testing
