#include "tests/gpu/gpu_test_support.h"

#include <map>
#include <mutex>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/hashing.h"
#include "common/status_macros.h"
#include "kernels/codegen.h"
#include "kernels/gpu_target.h"
#include "kernels/nvrtc_compiler.h"
#include "kernels/planner.h"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd::gpu::testing {
namespace {

struct GpuState {
  std::string no_gpu_reason;
  CudaDevice device;
};

GpuState ProbeGpu() {
  GpuState state;
  absl::StatusOr<CudaDevice> device = UseDevice(0);
  if (!device.ok()) {
    state.no_gpu_reason = std::string(device.status().message());
  } else {
    state.device = *device;
  }
  return state;
}

const GpuState& Gpu() {
  static const GpuState* const state = new GpuState(ProbeGpu());
  return *state;
}

absl::StatusOr<v1::KernelSet> Resolve(const std::string& spec_text, int64_t n,
                                      int64_t k, const std::string& arch) {
  ASSIGN_OR_RETURN(QuantSpec spec, ParseSpecText(spec_text));
  RETURN_IF_ERROR(ValidateSpec(spec));
  KernelRequest request;
  request.family = KernelFamily::kDequant;
  request.spec = spec;
  request.shape.n = n;
  request.shape.k = k;
  RETURN_IF_ERROR(
      ValidateShape(spec, request.shape, request.family, ShapeLimits{}));
  ASSIGN_OR_RETURN(request.gpu, ParseGpuArch(arch));
  ASSIGN_OR_RETURN(Plan plan, PlanKernels(request));

  v1::KernelSet set;
  // As a daemon sends it (Dequantize checks it).
  set.set_family(v1::KERNEL_FAMILY_DEQUANT);
  set.set_canonical_spec(FormatSpecText(spec));
  set.set_plan_key(Sha256Hex(absl::StrCat("test-plan|", set.canonical_spec(),
                                          "|", n, "|", k, "|", arch)));
  RETURN_IF_ERROR(AppendCompiledKernels(request, plan.entries, set));
  return set;
}

}  // namespace

absl::Status AppendCompiledKernels(const KernelRequest& request,
                                   const std::vector<PlanEntry>& entries,
                                   v1::KernelSet& set) {
  const std::string arch = request.gpu.ArchName();
  std::map<std::string, CompiledKernel> compiled;  // by artifact key
  for (const PlanEntry& entry : entries) {
    const std::string key = Sha256Hex(absl::StrCat(
        "test-artifact|", FormatSpecText(request.spec), "|", request.shape.n,
        "|", request.shape.k, "|", arch, "|", entry.config.skeleton, "|",
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
    launch->set_workspace_bytes_per_m_block(
        entry.launch.workspace_bytes_per_m_block);
    launch->set_counter_bytes_per_m_block(
        entry.launch.counter_bytes_per_m_block);
    launch->set_programmatic_dependent_launch(
        entry.launch.programmatic_dependent_launch);
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

std::string NoGpuReason() { return Gpu().no_gpu_reason; }

const CudaDevice& TestDevice() { return Gpu().device; }

std::string TestArch(const CudaDevice& device) {
  const bool has_arch_specific =
      device.sm == 90 || device.sm == 100 || device.sm == 120;
  return absl::StrCat("sm_", device.sm, has_arch_specific ? "a" : "");
}

absl::StatusOr<v1::KernelSet> ResolveDequant(const std::string& spec_text,
                                             int64_t n, int64_t k,
                                             const std::string& arch) {
  static std::mutex* const mu = new std::mutex;
  static auto* const memo =
      new std::map<std::tuple<std::string, int64_t, int64_t, std::string>,
                   v1::KernelSet>;
  const auto key = std::make_tuple(spec_text, n, k, arch);
  {
    std::lock_guard<std::mutex> lock(*mu);
    auto it = memo->find(key);
    if (it != memo->end()) return it->second;
  }
  ASSIGN_OR_RETURN(v1::KernelSet set, Resolve(spec_text, n, k, arch));
  std::lock_guard<std::mutex> lock(*mu);
  memo->emplace(key, set);
  return set;
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer_ == 0) return;
  absl::StatusOr<const CudaDriverApi*> api = CudaDriver();
  if (api.ok()) (*api)->cuMemFree(pointer_);
}

absl::Status DeviceBuffer::Allocate(size_t bytes, const void* data) {
  if (bytes == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
  RETURN_IF_ERROR(CudaCheck(api->cuMemAlloc(&pointer_, bytes), "cuMemAlloc"));
  bytes_ = bytes;
  if (data != nullptr) {
    RETURN_IF_ERROR(
        CudaCheck(api->cuMemcpyHtoD(pointer_, data, bytes), "cuMemcpyHtoD"));
  }
  return absl::OkStatus();
}

absl::Status DeviceBuffer::Fill(uint8_t byte) {
  if (bytes_ == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
  RETURN_IF_ERROR(
      CudaCheck(api->cuMemsetD8(pointer_, byte, bytes_), "cuMemsetD8"));
  // Memsets of device memory may return before they land; later launches on
  // non-default streams must see the poison.
  return CudaCheck(api->cuCtxSynchronize(), "cuCtxSynchronize");
}

absl::Status DeviceBuffer::Download(void* data, size_t bytes) const {
  ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
  return CudaCheck(api->cuMemcpyDtoH(data, pointer_, bytes), "cuMemcpyDtoH");
}

uint64_t TestSeed() { return hummingd::testing::TestSeed(); }

std::string SeedTrace(uint64_t seed) {
  return hummingd::testing::SeedTrace(seed);
}

}  // namespace hummingd::gpu::testing
