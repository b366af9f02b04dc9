// One process, several devices and threads: a kernel set loaded through one
// ArtifactCache on device 0 and then on device 1 launches on device 1 (the
// GEMM kernels' dynamic shared memory limit, above the 48 KB default, is a
// per-device attribute), and a layer works from threads that have no
// current context; results match an fp64 reference.

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "hummingd/gpu/quantized_linear.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/linear_layer.h"

namespace hummingd::gpu::testing {
namespace {

constexpr int kDefaultDynamicSharedMemory = 48 * 1024;
// How far cuMemGetInfo's free memory may move between two readings without
// a leak of ours (other processes, the driver's bookkeeping): half the
// smallest buffer a layer of the test's shape allocates (its repacked
// weights, N * K / 2 bytes = 2 MiB), so that leaking that one shows.
constexpr size_t kFreeMemoryTolerance = 1 << 20;

// Makes device `ordinal`'s primary context current on this thread.
absl::Status MakeCurrent(int ordinal) {
  ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
  CUdevice device = 0;
  RETURN_IF_ERROR(CudaCheck(api->cuDeviceGet(&device, ordinal), "cuDeviceGet"));
  CUcontext context = nullptr;
  RETURN_IF_ERROR(CudaCheck(api->cuDevicePrimaryCtxRetain(&context, device),
                            "cuDevicePrimaryCtxRetain"));
  return CudaCheck(api->cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

// Restores this thread's current context when a test leaves its scope
// (later tests expect the test device's).
class RestoreContext {
 public:
  RestoreContext() {
    if (auto api = CudaDriver(); api.ok()) {
      api_ = *api;
      api_->cuCtxGetCurrent(&saved_);
    }
  }
  ~RestoreContext() {
    if (api_ != nullptr) api_->cuCtxSetCurrent(saved_);
  }

 private:
  const CudaDriverApi* api_ = nullptr;
  CUcontext saved_ = nullptr;
};

// Free device memory as cuMemGetInfo reports it (device-wide; needs a
// current context).
absl::StatusOr<size_t> FreeDeviceMemory(const CudaDriverApi& api) {
  size_t free = 0;
  size_t total = 0;
  RETURN_IF_ERROR(CudaCheck(api.cuMemGetInfo(&free, &total), "cuMemGetInfo"));
  return free;
}

// The smallest M served by a kernel that asks for more dynamic shared
// memory than a device allows without the opt-in attribute; 0 if none
// does (up to 512 tokens, to keep the reference cheap).
int64_t MWithLargeSharedMemory(const LoadedKernelSet& set) {
  for (const LoadedKernel& kernel : set.kernels()) {
    if (kernel.m_min > 512) break;
    if (kernel.dynamic_shared_memory > kDefaultDynamicSharedMemory) {
      return kernel.m_min;
    }
  }
  return 0;
}

TEST(MultiDeviceTest, OneArtifactCacheServesASecondDevice) {
  HUMMINGD_REQUIRE_GPU();
  absl::StatusOr<const CudaDriverApi*> api = CudaDriver();
  ASSERT_TRUE(api.ok()) << api.status();
  int count = 0;
  ASSERT_EQ((*api)->cuDeviceGetCount(&count), CUDA_SUCCESS);
  if (count < 2) {
    GTEST_SKIP() << "skipped: needs 2 GPUs (" << count << " visible)";
  }
  RestoreContext restore;
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::string arch = TestArch(TestDevice());
  absl::StatusOr<v1::KernelSet> set = LinearLayerSet(arch);
  ASSERT_TRUE(set.ok()) << set.status();
  absl::StatusOr<HostLinearLayer> host = HostLinearLayer::Make(seed);
  ASSERT_TRUE(host.ok()) << host.status();
  ArtifactCache cache;

  int64_t loads_on_first_device = 0;
  int64_t m = 0;
  for (int ordinal : {0, 1}) {
    SCOPED_TRACE(absl::StrCat("device ", ordinal));
    ASSERT_TRUE(MakeCurrent(ordinal).ok());
    absl::StatusOr<std::unique_ptr<LoadedKernelSet>> loaded =
        LoadedKernelSet::Load(*set, cache);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_EQ((*loaded)->device().ordinal, ordinal);
    if (ordinal == 0) {
      if ((*loaded)->device().sm != TestDevice().sm) {
        GTEST_SKIP() << "skipped: device 0 is not the test device";
      }
      loads_on_first_device = cache.loads();
      m = MWithLargeSharedMemory(**loaded);
      ASSERT_GT(m, 0) << "no kernel of the set up to M = 512 needs more than "
                      << kDefaultDynamicSharedMemory
                      << " bytes of dynamic shared memory: the test would not "
                         "exercise the per-device limit";
    } else {
      if ((*loaded)->device().sm != TestDevice().sm) {
        GTEST_SKIP() << "skipped: device 1 is sm_" << (*loaded)->device().sm
                     << ", the kernels are for " << arch;
      }
      // CUDA 12+: the libraries loaded for device 0 serve device 1 too
      // (before it, each context loads its own modules).
      if ((*api)->HasLibraryApi()) {
        EXPECT_EQ(cache.loads(), loads_on_first_device);
      }
    }
    std::shared_ptr<const LoadedKernelSet> shared = *std::move(loaded);
    DeviceCheckpoint checkpoint;
    ASSERT_TRUE(checkpoint.Upload(*host).ok());
    absl::StatusOr<std::unique_ptr<QuantizedLinear>> layer =
        QuantizedLinear::Create(shared, checkpoint.Weights(), m,
                                /*stream=*/nullptr);
    ASSERT_TRUE(layer.ok()) << layer.status();
    absl::StatusOr<double> error = ForwardError(**layer, *host, m, seed);
    ASSERT_TRUE(error.ok()) << error.status();
    EXPECT_LE(*error, kLinearLayerBound) << "M = " << m;
  }
}

// A layer lives in one context, whichever thread calls it: created on a
// std::thread that has no current context (the set's device's primary
// context is used), forwarded from another such thread, and destroyed on a
// third, it computes what the reference says, leaves each thread without a
// current context, and frees what it allocated (in its own context: a free
// in the wrong one fails and leaks, which cuMemGetInfo shows).
TEST(MultiDeviceTest, LayerCallsFromThreadsWithoutAContext) {
  HUMMINGD_REQUIRE_GPU();
  RestoreContext restore;
  ASSERT_TRUE(MakeCurrent(TestDevice().ordinal).ok());
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  ArtifactCache cache;
  absl::StatusOr<LinearLayerSetup> setup =
      SetUpLinearLayer(TestArch(TestDevice()), cache, seed);
  ASSERT_TRUE(setup.ok()) << setup.status();
  const std::shared_ptr<const LoadedKernelSet>& shared = setup->set;
  const HostLinearLayer* host = &setup->host;
  const DeviceCheckpoint& checkpoint = *setup->checkpoint;
  const CudaDriverApi& api = shared->driver();
  const int64_t m = 16;

  // A layer's whole life on this thread first: the first launches may grow
  // the context's own reservations (local memory), which would otherwise
  // read as a leak below.
  {
    absl::StatusOr<std::unique_ptr<QuantizedLinear>> warm_up =
        QuantizedLinear::Create(shared, checkpoint.Weights(), m,
                                /*stream=*/nullptr);
    ASSERT_TRUE(warm_up.ok()) << warm_up.status();
    absl::StatusOr<double> error = ForwardError(**warm_up, *host, m, seed);
    ASSERT_TRUE(error.ok()) << error.status();
    EXPECT_LE(*error, kLinearLayerBound) << "from the creating thread";
  }

  const Activations activations = MakeActivations(*host, m, seed);
  DeviceBuffer x, y;
  ASSERT_TRUE(
      x.Allocate(activations.bits.size() * 2, activations.bits.data()).ok());
  ASSERT_TRUE(y.Allocate(static_cast<size_t>(m * kLinearLayerN * 2)).ok());
  ASSERT_TRUE(y.Fill(0xFF).ok());  // NaN in fp16
  ASSERT_EQ(api.cuCtxSynchronize(), CUDA_SUCCESS);
  absl::StatusOr<size_t> free_before = FreeDeviceMemory(api);
  ASSERT_TRUE(free_before.ok()) << free_before.status();

  CUcontext before = reinterpret_cast<CUcontext>(1);
  CUcontext after = reinterpret_cast<CUcontext>(1);
  absl::StatusOr<std::unique_ptr<QuantizedLinear>> layer =
      absl::UnknownError("not run");
  std::thread creator([&] {
    api.cuCtxGetCurrent(&before);
    layer = QuantizedLinear::Create(shared, checkpoint.Weights(), m,
                                    /*stream=*/nullptr);
    api.cuCtxGetCurrent(&after);
  });
  creator.join();
  ASSERT_EQ(before, nullptr) << "a new thread should have no current context";
  ASSERT_TRUE(layer.ok()) << layer.status();
  // Create leaves the caller's (empty) context stack as it was.
  EXPECT_EQ(after, nullptr);
  ASSERT_EQ(api.cuCtxSynchronize(), CUDA_SUCCESS);  // the repack
  absl::StatusOr<size_t> free_created = FreeDeviceMemory(api);
  ASSERT_TRUE(free_created.ok()) << free_created.status();
  // Else the comparison at the end could not tell a leak from a free.
  ASSERT_GE(*free_before, *free_created + kFreeMemoryTolerance)
      << "cuMemGetInfo did not see the layer's buffers";

  absl::Status forwarded = absl::UnknownError("not run");
  CUcontext after_forward = reinterpret_cast<CUcontext>(1);
  std::thread forwarder([&] {
    forwarded = (*layer)->Forward(x.get(), y.get(), m, /*stream=*/nullptr);
    api.cuCtxGetCurrent(&after_forward);
  });
  forwarder.join();
  ASSERT_TRUE(forwarded.ok()) << forwarded;
  EXPECT_EQ(after_forward, nullptr) << "Forward left a context current";
  // The layer's context is this thread's (the device's primary one), whose
  // legacy stream the forward ran on.
  ASSERT_EQ(api.cuCtxSynchronize(), CUDA_SUCCESS);
  std::vector<uint16_t> y_bits(static_cast<size_t>(m * kLinearLayerN));
  ASSERT_TRUE(y.Download(y_bits.data(), y_bits.size() * 2).ok());
  EXPECT_LE(OutputError(*host, activations, y_bits), kLinearLayerBound)
      << "the forward from a thread without a context";

  // The same from a thread without a context on an explicit stream (made in
  // the layer's context, current here): the launch then takes its context
  // from the stream and Forward pushes none (CUDA 12+).
  CUstream stream = nullptr;
  ASSERT_TRUE(CudaCheck(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                        "cuStreamCreate")
                  .ok());
  ASSERT_TRUE(y.Fill(0xFF).ok());
  absl::Status streamed = absl::UnknownError("not run");
  CUcontext after_streamed = reinterpret_cast<CUcontext>(1);
  std::thread stream_forwarder([&] {
    streamed = (*layer)->Forward(x.get(), y.get(), m, stream);
    api.cuCtxGetCurrent(&after_streamed);
  });
  stream_forwarder.join();
  ASSERT_TRUE(streamed.ok()) << streamed;
  EXPECT_EQ(after_streamed, nullptr) << "Forward left a context current";
  ASSERT_TRUE(CudaCheck(api.cuStreamSynchronize(stream), "sync").ok());
  ASSERT_TRUE(y.Download(y_bits.data(), y_bits.size() * 2).ok());
  EXPECT_LE(OutputError(*host, activations, y_bits), kLinearLayerBound)
      << "the forward on an explicit stream from a thread without a context";
  api.cuStreamDestroy(stream);

  CUcontext after_destroy = reinterpret_cast<CUcontext>(1);
  std::thread destroyer([&] {
    layer->reset();
    api.cuCtxGetCurrent(&after_destroy);
  });
  destroyer.join();
  EXPECT_EQ(after_destroy, nullptr) << "the destructor left a context current";
  absl::StatusOr<size_t> free_after = FreeDeviceMemory(api);
  ASSERT_TRUE(free_after.ok()) << free_after.status();
  EXPECT_GE(*free_after + kFreeMemoryTolerance, *free_before)
      << "the layer's buffers were not freed (" << *free_before - *free_after
      << " bytes less free memory than before it was created)";
}

}  // namespace
}  // namespace hummingd::gpu::testing
