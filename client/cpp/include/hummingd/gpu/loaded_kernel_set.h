#pragma once

// A v1::KernelSet made launchable on the current device: every cubin is
// verified (checksum, then arch against the device) before the driver sees
// it, each distinct artifact is loaded once per process through an
// ArtifactCache, and the M-range table picks the kernel for a token count.
//
// With CUDA 12+ drivers an artifact is a context-independent CUlibrary: one
// load serves every context, and launches pass the CUkernel handle, which
// the driver resolves in the stream's context (it is resolved in each
// context a set is loaded in, so that a refused image fails the load); its
// dynamic shared memory limit is a per-device attribute, raised on each
// device to the most any kernel loaded there asks for. Older drivers get a
// CUmodule in the context current at load time, so there an artifact is
// cached per context.

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/v1/kernel_service.pb.h"
#include "kernels/cubin_info.h"
#include "kernels/quant_spec.h"

namespace hummingd::gpu {

// One loaded cubin. Never unloaded: cubins are small and launches may still
// be queued on streams when the last set using one goes away.
struct LoadedArtifact {
  std::string artifact_key;
  std::string entry;
  std::string cubin;  // the verified image the driver loaded
  CubinInfo info;     // what the cubin says it is (arch, entry points)
  CUfunction function = nullptr;  // CUkernel (library) or module function
  bool context_independent = false;
};

// Artifacts by key, shared by every LoadedKernelSet built with it. Safe to
// use from many threads; a key is loaded into the driver at most once (per
// context for CUmodules), resolved once per context it is used in, and its
// dynamic shared memory limit raised per device whenever a kernel asks for
// more than before.
class ArtifactCache {
 public:
  ArtifactCache() = default;
  ArtifactCache(const ArtifactCache&) = delete;
  ArtifactCache& operator=(const ArtifactCache&) = delete;

  // The loaded artifact for `kernel` on `device` (the current context's).
  // `cubin` may be empty when the key is already loaded (KernelSets send
  // each cubin once). Errors name the kernel
  // (entry + artifact key prefix): DATA_LOSS for a checksum mismatch or a
  // malformed cubin, FAILED_PRECONDITION for a cubin whose arch cannot run
  // on `device`, INTERNAL when the driver refuses it.
  absl::StatusOr<std::shared_ptr<const LoadedArtifact>> GetOrLoad(
      const v1::Kernel& kernel, const std::string& cubin,
      const CudaDevice& device);

  int64_t loads() const;  // driver loads performed (for tests)

 private:
  // A CUlibrary serves every context (key: nullptr); a CUmodule only the
  // one it was loaded in.
  using Key = std::pair<std::string, CUcontext>;
  struct Entry {
    std::shared_ptr<const LoadedArtifact> artifact;
    // Per device, the dynamic shared memory limit raised for it: a CUkernel
    // attribute is per device, and a launch of a kernel that asks for more
    // than 48 KB (or than the limit raised) fails.
    absl::flat_hash_map<CUdevice, int> smem_limits;
    // Contexts a CUkernel has been resolved in (cuKernelGetFunction). A
    // context destroyed and another created at its address is taken for
    // resolved: that only skips the early check.
    absl::flat_hash_set<CUcontext> resolved_in;
  };

  // Makes `entry` launchable in `context` (current) on `device` for a
  // kernel asking for `dynamic_shared_memory` bytes.
  static absl::Status Prepare(const CudaDriverApi& api, Entry& entry,
                              CUcontext context, const CudaDevice& device,
                              int dynamic_shared_memory);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, Entry> artifacts_ ABSL_GUARDED_BY(mu_);
  int64_t loads_ ABSL_GUARDED_BY(mu_) = 0;
};

// One M range (or one weight-preparation kernel), ready to launch.
struct LoadedKernel {
  std::string role;  // "" for M-range kernels; e.g. "repack" for prepare
  int64_t m_min = 0;
  int64_t m_max = 0;  // inclusive
  std::shared_ptr<const LoadedArtifact> artifact;
  unsigned int block_x = 0;
  int64_t grid_x = 0;
  unsigned int grid_y = 1;
  unsigned int grid_z = 1;
  int64_t m_per_block_x = 0;
  unsigned int dynamic_shared_memory = 0;
  // Split-K: a launch for M tokens needs GridX(M) times these many bytes
  // of fp32 workspace and of u32 arrival counters (0 = none).
  int64_t workspace_bytes_per_m_block = 0;
  int64_t counter_bytes_per_m_block = 0;
  // Launched as a programmatic dependent of the stream's previous kernel
  // (the kernel itself waits for it before reading what it wrote).
  bool programmatic_dependent_launch = false;
  // Reads GemmArgs::scales as the k-major copy (a wgmma tile with
  // layout=kmajor; kernels/k_major_scales.h).
  bool k_major_scales = false;

  int64_t WorkspaceBytes(int64_t m) const {
    return GridX(m) * workspace_bytes_per_m_block;
  }
  int64_t CounterBytes(int64_t m) const {
    return GridX(m) * counter_bytes_per_m_block;
  }

  // grid_x for `m` tokens (LaunchParams: grid_x * ceil(M / m_per_block_x)
  // when m_per_block_x > 0).
  int64_t GridX(int64_t m) const {
    return m_per_block_x > 0
               ? grid_x * ((m + m_per_block_x - 1) / m_per_block_x)
               : grid_x;
  }
};

// FAILED_PRECONDITION when a kernel of `set` needs a newer launch ABI
// (kernels/launch_abi.h, GemmTileLaunchAbi) than the set says it was planned
// for: e.g. k-major scales (layout=kmajor) in a set planned below
// kLaunchAbiKMajorScales, from a daemon that predates the request's
// launch_abi field, whose k-major kernels expect arguments this client does
// not pass. Any such set is inconsistent. Load checks it first; no GPU
// needed.
absl::Status CheckKernelSetLaunchAbi(const v1::KernelSet& set);

// INVALID_ARGUMENT naming `op` and both families when `family` (a set's
// KernelSet.family) is not `wanted`: each family's kernels take their own
// argument struct (DequantArgs, GemmArgs), so launching a kernel of the
// other family would make the driver read a struct of the wrong size and
// layout (pointers from past its end). The C ABI checks before loading,
// Dequantize and QuantizedLinear::Create after. No GPU needed.
absl::Status CheckKernelSetFamily(v1::KernelFamily family,
                                  v1::KernelFamily wanted,
                                  absl::string_view op);

// For errors about an M above a kernel set's last range, which ends at
// `set_m_max`: when the set was served for KernelRequest.max_m =
// `served_max_m` (KernelSet.max_m) below `m` and a plan's ranges go on past
// `set_m_max` (they end at kDefaultMaxM), why it ends there and how to get
// the range; "" otherwise (the set holds every range of its plan, or max_m
// is not why). No GPU needed.
std::string MaxMNote(uint32_t served_max_m, int64_t set_m_max, int64_t m);

// LoadedKernelSet::ForM's lookup, usable without a GPU: the kernel of
// `kernels` (sorted, contiguous M ranges) whose range holds `m`.
// OUT_OF_RANGE outside them, naming KernelRequest.max_m when it is why
// (MaxMNote).
absl::StatusOr<const LoadedKernel*> KernelForM(
    const std::vector<LoadedKernel>& kernels, uint32_t served_max_m, int64_t m);

class LoadedKernelSet {
 public:
  // Loads `set` for the current context's device (UseDevice() makes one
  // current if none is). INVALID_ARGUMENT for an empty or malformed set
  // (ranges not sorted/contiguous, missing cubin, unparsable spec), else the
  // ArtifactCache errors.
  static absl::StatusOr<std::unique_ptr<LoadedKernelSet>> Load(
      const v1::KernelSet& set, ArtifactCache& cache);

  // The kernel whose range holds `m`; OUT_OF_RANGE outside the table
  // (KernelForM).
  absl::StatusOr<const LoadedKernel*> ForM(int64_t m) const;

  // The weight-preparation kernel with `role`; NOT_FOUND when the set has
  // none (e.g. dequant sets).
  absl::StatusOr<const LoadedKernel*> Prepare(absl::string_view role) const;

  const std::vector<LoadedKernel>& kernels() const { return kernels_; }
  const std::vector<LoadedKernel>& prepare() const { return prepare_; }
  const QuantSpec& spec() const { return spec_; }
  // KernelSet.family: which argument struct the kernels take.
  v1::KernelFamily family() const { return family_; }
  // N and K of the layer (KernelSet.shape); 0 when the set does not say.
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  // KernelSet.max_m: the KernelRequest.max_m the set was served for (0: every
  // range of its plan; N > 0 may still be every range when N reaches the
  // plan's last one, MaxMNote tells them apart).
  uint32_t served_max_m() const { return served_max_m_; }
  const CudaDevice& device() const { return device_; }
  const CudaDriverApi& driver() const { return *driver_; }

 private:
  LoadedKernelSet() = default;

  const CudaDriverApi* driver_ = nullptr;
  CudaDevice device_;
  QuantSpec spec_;
  v1::KernelFamily family_ = v1::KERNEL_FAMILY_UNSPECIFIED;
  int64_t n_ = 0;
  int64_t k_ = 0;
  uint32_t served_max_m_ = 0;
  std::vector<LoadedKernel> kernels_;  // sorted, contiguous ranges
  std::vector<LoadedKernel> prepare_;
};

// Enqueues `kernel` for `m` tokens with one kernel-parameter struct (the
// kernels take their arguments as a single struct). Allocates nothing and
// never synchronizes.
absl::Status LaunchKernel(const LoadedKernelSet& set,
                          const LoadedKernel& kernel, int64_t m, void* args,
                          CUstream stream);

}  // namespace hummingd::gpu
