#pragma once

// One QuantizedLinear layer for the GPU tests that exercise the layer op
// itself (contexts, threads, devices, graph capture) rather than the GEMM
// kernels: a fixed spec and shape, its GEMM set as a daemon sends it, its
// checkpoint tensors on the host with their exact dequantized weights, and
// the fp64 reference its outputs are checked against.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "hummingd/gpu/quantized_linear.h"
#include "hummingd/v1/kernel_service.pb.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"
#include "kernels/reference/dequant_reference.h"
#include "tests/gpu/gpu_test_support.h"

namespace hummingd::gpu::testing {

constexpr char kLinearLayerSpec[] =
    "weight=uint4,group=128,scale=fp16,zero=int,bias=1";
constexpr int64_t kLinearLayerN = 2048;
constexpr int64_t kLinearLayerK = 2048;
// Relative L2 error bound of fp16 outputs (gemm_gpu_test's).
constexpr double kLinearLayerBound = 1e-3;

// The layer's GEMM set as a daemon sends it: M-range kernels, the repack as
// a prepare kernel, the shape.
absl::StatusOr<v1::KernelSet> LinearLayerSet(const std::string& arch);

// The layer's tensors on the host, with their exact dequantized weights.
struct HostLinearLayer {
  QuantSpec spec;
  LayerShape shape;
  DequantInputs inputs;
  std::vector<float> w;  // (N, K)
  std::vector<uint16_t> bias_bits;
  std::vector<double> bias;

  static absl::StatusOr<HostLinearLayer> Make(uint64_t seed);
};

// The checkpoint tensors on the device current when Upload ran; to be
// destroyed with that device's context current.
struct DeviceCheckpoint {
  DeviceBuffer weights, scales, zero_points, bias;

  absl::Status Upload(const HostLinearLayer& host);
  CheckpointWeights Weights() const;
};

// Where every layer-op test starts: the layer's set loaded through `cache`
// on the current device, its host tensors, and their device copies.
struct LinearLayerSetup {
  std::shared_ptr<const LoadedKernelSet> set;
  HostLinearLayer host;
  std::unique_ptr<DeviceCheckpoint> checkpoint;
};
absl::StatusOr<LinearLayerSetup> SetUpLinearLayer(const std::string& arch,
                                                  ArtifactCache& cache,
                                                  uint64_t seed);

// Random activations for `m` tokens: the bits to upload and their values.
struct Activations {
  int64_t m = 0;
  std::vector<uint16_t> bits;  // (m, K) in the spec's activation type
  std::vector<float> values;
};
Activations MakeActivations(const HostLinearLayer& host, int64_t m,
                            uint64_t seed);

// ||y - ref|| / ||ref|| of the outputs `y_bits` (m, N) of `x` against the
// fp64 reference; infinity when an output is not finite.
double OutputError(const HostLinearLayer& host, const Activations& x,
                   const std::vector<uint16_t>& y_bits);

// OutputError of one Forward of `m` tokens on the NULL stream, with x and y
// on the current device.
absl::StatusOr<double> ForwardError(const QuantizedLinear& layer,
                                    const HostLinearLayer& host, int64_t m,
                                    uint64_t seed);

}  // namespace hummingd::gpu::testing
