#include "hummingd/gpu/loaded_kernel_set.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/hashing.h"
#include "common/status_macros.h"
#include "kernels/gemm_config.h"
#include "kernels/gpu_target.h"
#include "kernels/launch_abi.h"
#include "kernels/plan.h"

namespace hummingd::gpu {
namespace {

// How errors name a kernel: its entry and enough of its key to find it in
// `hummingctl ls`.
std::string KernelName(const v1::Kernel& kernel) {
  return absl::StrCat("kernel ", kernel.entry(), " (artifact ",
                      kernel.artifact_key().substr(0, 16), ")");
}

absl::Status Annotate(const absl::Status& status, const std::string& name) {
  return absl::Status(status.code(),
                      absl::StrCat(name, ": ", status.message()));
}

absl::Status CheckRunsOn(const CubinInfo& info, const CudaDevice& device,
                         const std::string& name) {
  GpuTarget target;
  target.sm = device.sm;
  if (CubinRunsOn(info, target)) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      name, ": cubin is for ", info.ArchName(), ", which cannot run on device ",
      device.ordinal, " (", device.name, ", sm_", device.sm, ")"));
}

// Loads a verified cubin into `artifact` (its function handle).
absl::Status LoadIntoDriver(const CudaDriverApi& api,
                            LoadedArtifact& artifact) {
  const void* image = artifact.cubin.data();
  if (api.HasLibraryApi()) {
    CUlibrary library = nullptr;
    RETURN_IF_ERROR(
        CudaCheck(api.cuLibraryLoadData(&library, image, nullptr, nullptr, 0,
                                        nullptr, nullptr, 0),
                  "cuLibraryLoadData"));
    CUkernel handle = nullptr;
    RETURN_IF_ERROR(CudaCheck(
        api.cuLibraryGetKernel(&handle, library, artifact.entry.c_str()),
        "cuLibraryGetKernel"));
    // Launch APIs take a CUkernel where a CUfunction is expected and run it
    // in the stream's context.
    artifact.function = reinterpret_cast<CUfunction>(handle);
    artifact.context_independent = true;
    return absl::OkStatus();
  }
  CUmodule module = nullptr;
  RETURN_IF_ERROR(
      CudaCheck(api.cuModuleLoadData(&module, image), "cuModuleLoadData"));
  return CudaCheck(api.cuModuleGetFunction(&artifact.function, module,
                                           artifact.entry.c_str()),
                   "cuModuleGetFunction");
}

}  // namespace

absl::Status ArtifactCache::Prepare(const CudaDriverApi& api, Entry& entry,
                                    CUcontext context, const CudaDevice& device,
                                    int dynamic_shared_memory) {
  const LoadedArtifact& artifact = *entry.artifact;
  if (artifact.context_independent && !entry.resolved_in.contains(context)) {
    // The driver loads a library into a context lazily, at its first
    // launch there; resolving it now surfaces an image this device refuses
    // at load time rather than at that launch, which may be inside a
    // graph capture.
    CUfunction resolved = nullptr;
    RETURN_IF_ERROR(
        CudaCheck(api.cuKernelGetFunction(
                      &resolved, reinterpret_cast<CUkernel>(artifact.function)),
                  "cuKernelGetFunction"));
    entry.resolved_in.insert(context);
  }
  // Kernels sharing an artifact may ask for different amounts (their
  // launch params come with each kernel, not the cubin): raised again
  // whenever one asks for more than any before it on this device.
  auto raised = entry.smem_limits.find(device.device);
  if (dynamic_shared_memory <= 0 || (raised != entry.smem_limits.end() &&
                                     raised->second >= dynamic_shared_memory)) {
    return absl::OkStatus();
  }
  if (artifact.context_independent) {
    // A CUkernel attribute is per device: a launch on a device it was not
    // raised for fails with CUDA_ERROR_INVALID_VALUE.
    RETURN_IF_ERROR(CudaCheck(
        api.cuKernelSetAttribute(
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            dynamic_shared_memory,
            reinterpret_cast<CUkernel>(artifact.function), device.device),
        "cuKernelSetAttribute(max dynamic shared memory)"));
  } else {
    // A module function belongs to one context, hence one device.
    RETURN_IF_ERROR(CudaCheck(
        api.cuFuncSetAttribute(artifact.function,
                               CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               dynamic_shared_memory),
        "cuFuncSetAttribute(max dynamic shared memory)"));
  }
  entry.smem_limits[device.device] = dynamic_shared_memory;
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const LoadedArtifact>> ArtifactCache::GetOrLoad(
    const v1::Kernel& kernel, const std::string& cubin,
    const CudaDevice& device) {
  const std::string name = KernelName(kernel);
  ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
  CUcontext context = nullptr;
  RETURN_IF_ERROR(CudaCheck(api->cuCtxGetCurrent(&context), "cuCtxGetCurrent"));
  // A CUlibrary serves every context; a CUmodule only its own.
  const Key key(kernel.artifact_key(),
                api->HasLibraryApi() ? nullptr : context);
  const int dynamic_shared_memory = kernel.launch().dynamic_shared_memory();
  // Loads are rare (once per artifact per process) and take milliseconds;
  // holding the lock across one is what makes "at most once" simple.
  absl::MutexLock lock(&mu_);
  auto it = artifacts_.find(key);
  if (it != artifacts_.end()) {
    Entry& entry = it->second;
    const LoadedArtifact& loaded = *entry.artifact;
    RETURN_IF_ERROR(CheckRunsOn(loaded.info, device, name));
    if (loaded.entry != kernel.entry()) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": artifact already loaded with entry ", loaded.entry));
    }
    const absl::Status prepared =
        Prepare(*api, entry, context, device, dynamic_shared_memory);
    if (!prepared.ok()) return Annotate(prepared, name);
    return entry.artifact;
  }
  // A module for another context may have the verified bytes this set did
  // not repeat (each cubin travels once per set, a metadata-only set has
  // none).
  const std::string* image = &cubin;
  if (image->empty() && key.second != nullptr) {
    for (const auto& [other_key, other] : artifacts_) {
      if (other_key.first == key.first) {
        image = &other.artifact->cubin;
        break;
      }
    }
  }
  if (image->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name,
                     ": kernel_set carries no cubin for this artifact "
                     "(metadata-only response?)"));
  }
  const uint64_t checksum = Checksum64(*image);
  if (checksum != kernel.cubin_checksum()) {
    return absl::DataLossError(absl::StrCat(
        name, ": cubin checksum mismatch (got ", checksum, ", expected ",
        kernel.cubin_checksum(), "); refusing to load it"));
  }
  absl::StatusOr<CubinInfo> info = InspectCubin(*image);
  if (!info.ok()) return Annotate(info.status(), name);
  RETURN_IF_ERROR(CheckRunsOn(*info, device, name));
  if (!std::binary_search(info->kernels.begin(), info->kernels.end(),
                          kernel.entry())) {
    return absl::DataLossError(
        absl::StrCat(name, ": cubin does not export the entry point"));
  }

  auto artifact = std::make_shared<LoadedArtifact>();
  artifact->artifact_key = kernel.artifact_key();
  artifact->entry = kernel.entry();
  artifact->info = *std::move(info);
  // The driver copies the image, but keeping the bytes costs a few KB and
  // does not depend on that.
  artifact->cubin = *image;
  absl::Status loaded = LoadIntoDriver(*api, *artifact);
  if (!loaded.ok()) return Annotate(loaded, name);
  Entry entry;
  entry.artifact = std::move(artifact);
  loaded = Prepare(*api, entry, context, device, dynamic_shared_memory);
  if (!loaded.ok()) return Annotate(loaded, name);
  ++loads_;
  auto [inserted, unused] = artifacts_.emplace(key, std::move(entry));
  return inserted->second.artifact;
}

int64_t ArtifactCache::loads() const {
  absl::MutexLock lock(&mu_);
  return loads_;
}

namespace {

// Checks one kernel's launch parameters and loads its artifact.
absl::StatusOr<LoadedKernel> LoadOne(
    const v1::Kernel& kernel, const std::string& field,
    const absl::flat_hash_map<std::string, const std::string*>& cubins,
    ArtifactCache& cache, const CudaDevice& device) {
  const v1::LaunchParams& launch = kernel.launch();
  constexpr int64_t kMaxGrid = std::numeric_limits<int32_t>::max();
  const int64_t grid_y = launch.grid_y() == 0 ? 1 : launch.grid_y();
  const int64_t grid_z = launch.grid_z() == 0 ? 1 : launch.grid_z();
  if (launch.block_x() <= 0 || launch.grid_x() <= 0 ||
      launch.grid_x() > kMaxGrid || grid_y < 1 || grid_y > 65535 ||
      grid_z < 1 || grid_z > 65535 || launch.m_per_block_x() < 0 ||
      launch.dynamic_shared_memory() < 0 ||
      launch.workspace_bytes_per_m_block() < 0 ||
      launch.counter_bytes_per_m_block() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field,
                     ".launch: block and grid must be positive and within the "
                     "device limits (block_x=",
                     launch.block_x(), ", grid=", launch.grid_x(), "x", grid_y,
                     "x", grid_z, ")"));
  }
  static const std::string kNoCubin;
  auto cubin = cubins.find(kernel.artifact_key());
  ASSIGN_OR_RETURN(
      std::shared_ptr<const LoadedArtifact> artifact,
      cache.GetOrLoad(kernel, cubin == cubins.end() ? kNoCubin : *cubin->second,
                      device));
  LoadedKernel entry;
  entry.role = kernel.role();
  entry.m_min = kernel.m_min();
  entry.m_max = kernel.m_max();
  entry.artifact = std::move(artifact);
  entry.block_x = static_cast<unsigned int>(launch.block_x());
  entry.grid_x = launch.grid_x();
  entry.grid_y = static_cast<unsigned int>(grid_y);
  entry.grid_z = static_cast<unsigned int>(grid_z);
  entry.m_per_block_x = launch.m_per_block_x();
  entry.dynamic_shared_memory =
      static_cast<unsigned int>(launch.dynamic_shared_memory());
  entry.workspace_bytes_per_m_block = launch.workspace_bytes_per_m_block();
  entry.counter_bytes_per_m_block = launch.counter_bytes_per_m_block();
  entry.programmatic_dependent_launch = launch.programmatic_dependent_launch();
  // Only Hopper decode tiles take options; their text says whether the
  // kernel reads GemmArgs::scales as the layer's k-major copy.
  if (absl::StrContains(kernel.config(), "mma=wgmma")) {
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(kernel.config());
    if (!tile.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          field, ".config: '", kernel.config(),
          "' is not a tile this client can launch (", tile.status().message(),
          "); a newer daemon may need a newer client"));
    }
    entry.k_major_scales = tile->k_major_scales;
  }
  return entry;
}

}  // namespace

absl::Status CheckKernelSetLaunchAbi(const v1::KernelSet& set) {
  for (int i = 0; i < set.kernels_size(); ++i) {
    const std::string& config = set.kernels(i).config();
    // Only wgmma tiles carry options that ask anything of the launcher.
    if (!absl::StrContains(config, "mma=wgmma")) continue;
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(config);
    if (!tile.ok()) continue;  // LoadOne names the unreadable text
    const uint32_t needed = GemmTileLaunchAbi(*tile);
    if (needed > set.launch_abi()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "kernel_set.kernels[", i, "]: '", config, "' needs launch ABI ",
          needed, ", but the set was planned for launch ABI ", set.launch_abi(),
          " (e.g. a daemon older than this client's launch ABI field, whose "
          "layout=kmajor kernels expect arguments this client does not "
          "pass); upgrade the daemon"));
    }
  }
  return absl::OkStatus();
}

namespace {

// How errors name a family: as callers spell it when they resolve a set;
// by number when this client does not know it (a newer daemon's family).
std::string FamilyName(v1::KernelFamily family) {
  switch (family) {
    case v1::KERNEL_FAMILY_DEQUANT:
      return "\"dequant\"";
    case v1::KERNEL_FAMILY_GEMM:
      return "\"gemm\"";
    case v1::KERNEL_FAMILY_UNSPECIFIED:
      return "unspecified";
    default:
      return absl::StrCat("unknown family ", static_cast<int>(family));
  }
}

}  // namespace

absl::Status CheckKernelSetFamily(v1::KernelFamily family,
                                  v1::KernelFamily wanted,
                                  absl::string_view op) {
  if (family == wanted) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("kernel_set.family: ", op, " needs a ", FamilyName(wanted),
                   " kernel set (got ", FamilyName(family), ")"));
}

absl::StatusOr<std::unique_ptr<LoadedKernelSet>> LoadedKernelSet::Load(
    const v1::KernelSet& set, ArtifactCache& cache) {
  RETURN_IF_ERROR(CheckKernelSetLaunchAbi(set));
  ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
  ASSIGN_OR_RETURN(CudaDevice device, UseDevice());
  if (set.kernels().empty()) {
    return absl::InvalidArgumentError("kernel_set.kernels: must not be empty");
  }
  absl::StatusOr<QuantSpec> spec = ParseSpecText(set.canonical_spec());
  if (!spec.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel_set.canonical_spec: ", spec.status().message()));
  }
  absl::Status valid = ValidateSpec(*spec);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel_set.canonical_spec: ", valid.message()));
  }

  // Each cubin travels once, in the first kernel that uses it.
  absl::flat_hash_map<std::string, const std::string*> cubins;
  for (const auto* kernels : {&set.kernels(), &set.prepare()}) {
    for (const v1::Kernel& kernel : *kernels) {
      if (!kernel.cubin().empty()) {
        cubins.emplace(kernel.artifact_key(), &kernel.cubin());
      }
    }
  }

  std::unique_ptr<LoadedKernelSet> loaded(new LoadedKernelSet());
  loaded->driver_ = api;
  loaded->device_ = std::move(device);
  loaded->spec_ = *spec;
  loaded->family_ = set.family();
  loaded->n_ = set.shape().n();
  loaded->k_ = set.shape().k();
  loaded->served_max_m_ = set.max_m();
  for (int i = 0; i < set.kernels_size(); ++i) {
    const v1::Kernel& kernel = set.kernels(i);
    const std::string field = absl::StrCat("kernel_set.kernels[", i, "]");
    const int64_t previous_max = i == 0 ? 0 : loaded->kernels_.back().m_max;
    if (kernel.m_min() < 1 || kernel.m_max() < kernel.m_min() ||
        (i > 0 && kernel.m_min() != previous_max + 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": M ranges must be sorted, contiguous and start at 1 (got [",
          kernel.m_min(), ", ", kernel.m_max(), "])"));
    }
    ASSIGN_OR_RETURN(LoadedKernel entry,
                     LoadOne(kernel, field, cubins, cache, loaded->device_));
    loaded->kernels_.push_back(std::move(entry));
  }
  for (int i = 0; i < set.prepare_size(); ++i) {
    const v1::Kernel& kernel = set.prepare(i);
    const std::string field = absl::StrCat("kernel_set.prepare[", i, "]");
    if (kernel.role().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".role: must name what the kernel prepares"));
    }
    ASSIGN_OR_RETURN(LoadedKernel entry,
                     LoadOne(kernel, field, cubins, cache, loaded->device_));
    loaded->prepare_.push_back(std::move(entry));
  }
  return loaded;
}

std::string MaxMNote(uint32_t served_max_m, int64_t set_m_max, int64_t m) {
  // A set whose last range reaches the planner's end was not cut: a larger
  // max_m would give the same set.
  if (served_max_m == 0 || m <= static_cast<int64_t>(served_max_m) ||
      set_m_max >= kDefaultMaxM) {
    return "";
  }
  return absl::StrCat(
      "the kernel set was resolved with KernelRequest.max_m = ", served_max_m,
      ", so it holds only the ranges serving M <= ", served_max_m,
      "; resolve the layer with max_m >= ", m, " (or 0 for every range)");
}

absl::StatusOr<const LoadedKernel*> KernelForM(
    const std::vector<LoadedKernel>& kernels, uint32_t served_max_m,
    int64_t m) {
  auto it = std::upper_bound(
      kernels.begin(), kernels.end(), m,
      [](int64_t value, const LoadedKernel& k) { return value < k.m_min; });
  if (it != kernels.begin() && m <= std::prev(it)->m_max) {
    return &*std::prev(it);
  }
  if (kernels.empty()) {
    return absl::OutOfRangeError(absl::StrCat(
        "m: ", m, " is outside the kernel set: it has no kernels"));
  }
  std::string message =
      absl::StrCat("m: ", m, " is outside the kernel set's M ranges [",
                   kernels.front().m_min, ", ", kernels.back().m_max, "]");
  // Only above the last range can a smaller max_m be why.
  if (m > kernels.back().m_max) {
    const std::string note = MaxMNote(served_max_m, kernels.back().m_max, m);
    if (!note.empty()) absl::StrAppend(&message, ": ", note);
  }
  return absl::OutOfRangeError(message);
}

absl::StatusOr<const LoadedKernel*> LoadedKernelSet::ForM(int64_t m) const {
  return KernelForM(kernels_, served_max_m_, m);
}

absl::StatusOr<const LoadedKernel*> LoadedKernelSet::Prepare(
    absl::string_view role) const {
  for (const LoadedKernel& kernel : prepare_) {
    if (kernel.role == role) return &kernel;
  }
  return absl::NotFoundError(
      absl::StrCat("kernel_set: no prepare kernel with role '", role, "'"));
}

absl::Status LaunchKernel(const LoadedKernelSet& set,
                          const LoadedKernel& kernel, int64_t m, void* args,
                          CUstream stream) {
  const int64_t grid_x = kernel.GridX(m);
  if (grid_x <= 0 || grid_x > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("m: ", m, " gives a grid of ", grid_x, " blocks"));
  }
  void* params[] = {args};
  CUlaunchConfig config = {};
  config.gridDimX = static_cast<unsigned int>(grid_x);
  config.gridDimY = kernel.grid_y;
  config.gridDimZ = kernel.grid_z;
  config.blockDimX = kernel.block_x;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = kernel.dynamic_shared_memory;
  config.hStream = stream;
  CUlaunchAttribute attribute = {};
  if (kernel.programmatic_dependent_launch) {
    attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
  } else {
    config.attrs = nullptr;
    config.numAttrs = 0;
  }
  const CUresult result = set.driver().cuLaunchKernelEx(
      &config, kernel.artifact->function, params, nullptr);
  if (result != CUDA_SUCCESS) {
    return CudaStatus(
        result, absl::StrCat("cuLaunchKernelEx(", kernel.artifact->entry, ")"));
  }
  return absl::OkStatus();
}

}  // namespace hummingd::gpu
