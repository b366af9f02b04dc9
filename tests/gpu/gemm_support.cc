#include "tests/gpu/gemm_support.h"

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/hashing.h"
#include "common/status_macros.h"
#include "gemm/wna16_args.cuh"
#include "kernels/codegen.h"
#include "kernels/gpu_target.h"
#include "kernels/nvrtc_compiler.h"
#include "kernels/planner.h"
#include "tests/gpu/gpu_test_support.h"

namespace hummingd::gpu::testing {
namespace {

// Appends one kernel per entry to `set`, compiling each distinct config
// once (cubin only in its first kernel, as the daemon sends it).
absl::Status AddKernels(const KernelRequest& request, const std::string& arch,
                        const std::vector<PlanEntry>& entries,
                        v1::KernelSet& set) {
  std::map<std::string, CompiledKernel> compiled;
  for (const PlanEntry& entry : entries) {
    const std::string key = Sha256Hex(absl::StrCat(
        "test-gemm-artifact|", set.canonical_spec(), "|", request.shape.n, "|",
        request.shape.k, "|", arch, "|", entry.config.skeleton, "|",
        entry.config.text, "|", CodegenHash()));
    v1::Kernel* kernel = set.add_kernels();
    auto it = compiled.find(key);
    if (it == compiled.end()) {
      ASSIGN_OR_RETURN(KernelSource source,
                       GenerateStub(request, entry.config));
      ASSIGN_OR_RETURN(CompiledKernel cubin,
                       CompileKernel(source, request.gpu));
      it = compiled.emplace(key, std::move(cubin)).first;
      kernel->set_cubin(it->second.cubin);
    }
    kernel->set_m_min(entry.m_min);
    kernel->set_m_max(entry.m_max);
    kernel->set_artifact_key(key);
    kernel->set_entry(it->second.entry);
    kernel->set_cubin_checksum(Checksum64(it->second.cubin));
    v1::LaunchParams* launch = kernel->mutable_launch();
    launch->set_block_x(entry.launch.block_x);
    launch->set_grid_x(entry.launch.grid_x);
    launch->set_grid_y(entry.launch.grid_y);
    launch->set_grid_z(entry.launch.grid_z);
    launch->set_m_per_block_x(entry.launch.m_per_block_x);
    launch->set_dynamic_shared_memory(entry.launch.dynamic_shared_memory);
    kernel->set_threads_per_block(entry.config.threads_per_block);
    kernel->set_dynamic_shared_memory(entry.config.dynamic_shared_memory);
    kernel->set_arch(arch);
    kernel->set_toolchain(Toolchain().Identity());
    kernel->set_config(entry.config.text);
    kernel->set_compile_ms(it->second.compile_ms);
    kernel->set_registers(-1);
  }
  return absl::OkStatus();
}

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
  GemmLayerKernels out;
  ASSIGN_OR_RETURN(out.plan, PlanKernels(request));
  ASSIGN_OR_RETURN(out.repack_entry, PlanRepack(request));
  for (v1::KernelSet* set : {&out.gemm, &out.repack}) {
    set->set_canonical_spec(FormatSpecText(spec));
    set->set_plan_key(Sha256Hex(
        absl::StrCat("test-gemm-plan|", set == &out.gemm ? "gemm" : "repack",
                     "|", set->canonical_spec(), "|", n, "|", k, "|", arch)));
  }
  RETURN_IF_ERROR(AddKernels(request, arch, out.plan.entries, out.gemm));
  RETURN_IF_ERROR(AddKernels(request, arch, {out.repack_entry}, out.repack));
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
  for (const PlanEntry& entry : plan.entries) {
    if (m >= entry.m_min && m <= entry.m_max) return &entry;
  }
  return absl::OutOfRangeError(absl::StrCat("m=", m, " is outside the plan"));
}

absl::Status LaunchGemm(const LoadedKernelSet& set, const GemmBuffers& buffers,
                        int64_t m, CUstream stream) {
  ASSIGN_OR_RETURN(const LoadedKernel* kernel, set.ForM(m));
  GemmArgs args;
  args.x = reinterpret_cast<const void*>(buffers.x);
  args.weights = reinterpret_cast<const device::u32*>(buffers.weights);
  args.scales = reinterpret_cast<const void*>(buffers.scales);
  args.zero_points = reinterpret_cast<const void*>(buffers.zero_points);
  args.secondary_scale =
      reinterpret_cast<const float*>(buffers.secondary_scale);
  args.bias = reinterpret_cast<const void*>(buffers.bias);
  args.y = reinterpret_cast<void*>(buffers.y);
  args.workspace = reinterpret_cast<void*>(buffers.workspace);
  args.split_counters = reinterpret_cast<device::u32*>(buffers.split_counters);
  args.m = m;
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
