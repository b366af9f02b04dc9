// One process, several devices and threads: a kernel set loaded through one
// ArtifactCache on device 0 and then on device 1 launches on device 1 (the
// GEMM kernels' dynamic shared memory limit, above the 48 KB default, is a
// per-device attribute), and a layer works from threads that have no
// current context; results match an fp64 reference.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "hummingd/gpu/quantized_linear.h"
#include "kernels/reference/dequant_reference.h"
#include "kernels/reference/format_reference.h"
#include "tests/gpu/gemm_support.h"
#include "tests/gpu/gpu_test_support.h"

namespace hummingd::gpu::testing {
namespace {

constexpr char kSpec[] = "weight=uint4,group=128,scale=fp16,zero=int,bias=1";
constexpr int64_t kN = 2048;
constexpr int64_t kK = 2048;
constexpr int kDefaultDynamicSharedMemory = 48 * 1024;
// Relative L2 error bound of fp16 outputs (gemm_gpu_test's).
constexpr double kBound = 1e-3;

// The layer's GEMM set as a daemon sends it: M-range kernels, the repack as
// a prepare kernel, the shape.
absl::StatusOr<v1::KernelSet> LayerSet(const std::string& arch) {
  ASSIGN_OR_RETURN(GemmLayerKernels kernels, ResolveGemm(kSpec, kN, kK, arch));
  if (kernels.repack.kernels_size() != 1) {
    return absl::InternalError("the repack set has no single kernel");
  }
  v1::KernelSet set = kernels.gemm;
  set.mutable_shape()->set_n(kN);
  set.mutable_shape()->set_k(kK);
  v1::Kernel* repack = set.add_prepare();
  *repack = kernels.repack.kernels(0);
  repack->set_role("repack");
  return set;
}

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

// The layer's tensors on the host, with their exact dequantized weights.
struct HostLayer {
  QuantSpec spec;
  LayerShape shape;
  DequantInputs inputs;
  std::vector<float> w;  // (N, K)
  std::vector<uint16_t> bias_bits;
  std::vector<double> bias;

  static absl::StatusOr<HostLayer> Make(uint64_t seed) {
    HostLayer layer;
    ASSIGN_OR_RETURN(layer.spec, ParseSpecText(kSpec));
    layer.shape.n = kN;
    layer.shape.k = kK;
    layer.inputs = MakeRandomDequantInputs(layer.spec, layer.shape, seed);
    ASSIGN_OR_RETURN(
        layer.w, ReferenceDequantize(layer.spec, layer.shape, layer.inputs));
    std::mt19937_64 rng(seed + 1);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (int64_t j = 0; j < kN; ++j) {
      const uint32_t bits =
          ReferenceEncodeFloat(uniform(rng), layer.spec.output_type);
      layer.bias_bits.push_back(static_cast<uint16_t>(bits));
      layer.bias.push_back(ReferenceDecodeScale(layer.spec.output_type, bits));
    }
    return layer;
  }
};

// The checkpoint tensors on the device current when Upload ran; to be
// destroyed with that device's context current.
struct DeviceCheckpoint {
  DeviceBuffer weights, scales, zero_points, bias;

  absl::Status Upload(const HostLayer& host) {
    const DequantInputs& in = host.inputs;
    RETURN_IF_ERROR(weights.Allocate(in.weights.size() * sizeof(uint32_t),
                                     in.weights.data()));
    RETURN_IF_ERROR(scales.Allocate(in.scales.size(), in.scales.data()));
    RETURN_IF_ERROR(
        zero_points.Allocate(in.zero_points.size(), in.zero_points.data()));
    return bias.Allocate(host.bias_bits.size() * 2, host.bias_bits.data());
  }
  CheckpointWeights Weights() const {
    CheckpointWeights out;
    out.weights = weights.get();
    out.scales = scales.get();
    out.zero_points = zero_points.get();
    out.bias = bias.get();
    return out;
  }
};

// ||y - ref|| / ||ref|| of one Forward of `m` tokens (infinity when an
// output is not finite), run with x and y on the current device.
absl::StatusOr<double> ForwardError(const QuantizedLinear& layer,
                                    const HostLayer& host, int64_t m,
                                    uint64_t seed) {
  const DataType act = host.spec.activation_type;
  const DataType out = host.spec.output_type;
  std::mt19937_64 rng(seed + 2);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<uint16_t> x_bits(m * kK);
  std::vector<float> x(m * kK);
  for (int64_t i = 0; i < m * kK; ++i) {
    x_bits[i] = static_cast<uint16_t>(ReferenceEncodeFloat(uniform(rng), act));
    x[i] = ReferenceDecodeScale(act, x_bits[i]);
  }
  std::vector<uint16_t> y_bits(m * kN);
  {
    DeviceBuffer x_device, y_device;
    RETURN_IF_ERROR(x_device.Allocate(x_bits.size() * 2, x_bits.data()));
    RETURN_IF_ERROR(y_device.Allocate(y_bits.size() * 2));
    RETURN_IF_ERROR(y_device.Fill(0xFF));  // NaN in fp16
    RETURN_IF_ERROR(
        layer.Forward(x_device.get(), y_device.get(), m, /*stream=*/nullptr));
    ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
    RETURN_IF_ERROR(CudaCheck(api->cuCtxSynchronize(), "Forward"));
    RETURN_IF_ERROR(y_device.Download(y_bits.data(), y_bits.size() * 2));
  }
  std::vector<double> errors(m, 0.0), norms(m, 0.0);
  std::vector<int64_t> non_finite(m, 0);
  ParallelFor(m, [&](int worker, int workers) {
    for (int64_t row = worker; row < m; row += workers) {
      for (int64_t col = 0; col < kN; ++col) {
        double ref = host.bias[col];
        for (int64_t i = 0; i < kK; ++i) {
          ref += static_cast<double>(x[row * kK + i]) * host.w[col * kK + i];
        }
        const double got = ReferenceDecodeScale(out, y_bits[row * kN + col]);
        if (!std::isfinite(got)) {
          ++non_finite[row];
          continue;
        }
        errors[row] += (got - ref) * (got - ref);
        norms[row] += ref * ref;
      }
    }
  });
  double error = 0, norm = 0;
  for (int64_t row = 0; row < m; ++row) {
    if (non_finite[row] > 0) return INFINITY;
    error += errors[row];
    norm += norms[row];
  }
  return std::sqrt(error / std::max(norm, 1e-30));
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
  absl::StatusOr<v1::KernelSet> set = LayerSet(arch);
  ASSERT_TRUE(set.ok()) << set.status();
  absl::StatusOr<HostLayer> host = HostLayer::Make(seed);
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
    EXPECT_LE(*error, kBound) << "M = " << m;
  }
}

// A layer lives in one context, whichever thread calls it: created on a
// std::thread that has no current context (the set's device's primary
// context is used), forwarded from another such thread, and destroyed on a
// third, it computes what the reference says.
TEST(MultiDeviceTest, LayerCallsFromThreadsWithoutAContext) {
  HUMMINGD_REQUIRE_GPU();
  RestoreContext restore;
  ASSERT_TRUE(MakeCurrent(TestDevice().ordinal).ok());
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  absl::StatusOr<v1::KernelSet> set = LayerSet(TestArch(TestDevice()));
  ASSERT_TRUE(set.ok()) << set.status();
  absl::StatusOr<HostLayer> host = HostLayer::Make(seed);
  ASSERT_TRUE(host.ok()) << host.status();
  ArtifactCache cache;
  absl::StatusOr<std::unique_ptr<LoadedKernelSet>> loaded =
      LoadedKernelSet::Load(*set, cache);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::shared_ptr<const LoadedKernelSet> shared = *std::move(loaded);
  const CudaDriverApi& api = shared->driver();
  DeviceCheckpoint checkpoint;
  ASSERT_TRUE(checkpoint.Upload(*host).ok());
  const int64_t m = 16;

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

  DeviceBuffer x, y;
  ASSERT_TRUE(x.Allocate(static_cast<size_t>(m * kK * 2)).ok());
  ASSERT_TRUE(x.Fill(0x3C).ok());  // fp16 1.0 + a little: finite
  ASSERT_TRUE(y.Allocate(static_cast<size_t>(m * kN * 2)).ok());
  absl::Status forwarded = absl::UnknownError("not run");
  std::thread forwarder([&] {
    forwarded = (*layer)->Forward(x.get(), y.get(), m, /*stream=*/nullptr);
  });
  forwarder.join();
  EXPECT_TRUE(forwarded.ok()) << forwarded;
  ASSERT_EQ(api.cuCtxSynchronize(), CUDA_SUCCESS);

  absl::StatusOr<double> error = ForwardError(**layer, *host, m, seed);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_LE(*error, kBound);

  std::thread destroyer([&] { layer->reset(); });
  destroyer.join();
  // The frees ran in the layer's context: this one is still usable.
  EXPECT_EQ(api.cuCtxSynchronize(), CUDA_SUCCESS);
}

}  // namespace
}  // namespace hummingd::gpu::testing
