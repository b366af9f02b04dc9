#pragma once

// What every GPU test shares: the skip rule (no driver or no device ->
// GTEST_SKIP with the reason), in-process kernel resolution (plan -> stub ->
// NVRTC, no daemon, no RocksDB) into a v1::KernelSet, and device buffers.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/v1/kernel_service.pb.h"
#include "kernels/layer_shape.h"
#include "kernels/plan.h"
#include "kernels/quant_spec.h"

namespace hummingd::gpu::testing {

// "" when a GPU is usable (and made current on this thread), else why not.
std::string NoGpuReason();

#define HUMMINGD_REQUIRE_GPU()                                        \
  do {                                                                \
    const std::string hummingd_no_gpu_ =                              \
        ::hummingd::gpu::testing::NoGpuReason();                      \
    if (!hummingd_no_gpu_.empty()) {                                  \
      GTEST_SKIP() << "skipped: no GPU (" << hummingd_no_gpu_ << ")"; \
    }                                                                 \
  } while (0)

// The device the tests run on (requires NoGpuReason() == "").
const CudaDevice& TestDevice();

// The arch the tests compile for on `device`: sm_XXa where an arch-specific
// variant exists (so the sm_90a-on-sm_90 rule is exercised), else sm_XX.
std::string TestArch(const CudaDevice& device);

// Resolves a dequant layer in-process the way the daemon does (validate,
// PlanKernels, GenerateStub, CompileKernel per distinct config), memoized
// per (spec, n, k, arch). Each cubin appears once, in its first kernel.
absl::StatusOr<v1::KernelSet> ResolveDequant(const std::string& spec_text,
                                             int64_t n, int64_t k,
                                             const std::string& arch);

// Appends one kernel per plan entry to `set`, compiling each distinct config
// once (its cubin only in its first kernel, as the daemon sends it); the
// artifact key is a test-local hash of everything that shapes the cubin.
absl::Status AppendCompiledKernels(const KernelRequest& request,
                                   const std::vector<PlanEntry>& entries,
                                   v1::KernelSet& set);

// Owns one device allocation (freed on destruction).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Allocates `bytes` (nothing for 0) and copies `data` in when non-null.
  absl::Status Allocate(size_t bytes, const void* data = nullptr);
  absl::Status Fill(uint8_t byte);  // synchronous
  absl::Status Download(void* data, size_t bytes) const;

  CUdeviceptr get() const { return pointer_; }
  size_t bytes() const { return bytes_; }

 private:
  CUdeviceptr pointer_ = 0;
  size_t bytes_ = 0;
};

// The seed for fresh random data: $HUMMINGD_TEST_SEED, else random.
uint64_t TestSeed();
std::string SeedTrace(uint64_t seed);

}  // namespace hummingd::gpu::testing
