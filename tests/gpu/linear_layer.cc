#include "tests/gpu/linear_layer.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/parallel_for.h"
#include "common/status_macros.h"
#include "hummingd/gpu/cuda_driver.h"
#include "kernels/reference/format_reference.h"
#include "tests/gpu/gemm_support.h"

namespace hummingd::gpu::testing {

absl::StatusOr<v1::KernelSet> LinearLayerSet(const std::string& arch) {
  ASSIGN_OR_RETURN(
      GemmLayerKernels kernels,
      ResolveGemm(kLinearLayerSpec, kLinearLayerN, kLinearLayerK, arch));
  if (kernels.repack.kernels_size() != 1) {
    return absl::InternalError("the repack set has no single kernel");
  }
  v1::KernelSet set = kernels.gemm;
  set.mutable_shape()->set_n(kLinearLayerN);
  set.mutable_shape()->set_k(kLinearLayerK);
  v1::Kernel* repack = set.add_prepare();
  *repack = kernels.repack.kernels(0);
  repack->set_role("repack");
  return set;
}

absl::StatusOr<HostLinearLayer> HostLinearLayer::Make(uint64_t seed) {
  HostLinearLayer layer;
  ASSIGN_OR_RETURN(layer.spec, ParseSpecText(kLinearLayerSpec));
  layer.shape.n = kLinearLayerN;
  layer.shape.k = kLinearLayerK;
  layer.inputs = MakeRandomDequantInputs(layer.spec, layer.shape, seed);
  ASSIGN_OR_RETURN(layer.w,
                   ReferenceDequantize(layer.spec, layer.shape, layer.inputs));
  std::mt19937_64 rng(seed + 1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int64_t j = 0; j < kLinearLayerN; ++j) {
    const uint32_t bits =
        ReferenceEncodeFloat(uniform(rng), layer.spec.output_type);
    layer.bias_bits.push_back(static_cast<uint16_t>(bits));
    layer.bias.push_back(ReferenceDecodeScale(layer.spec.output_type, bits));
  }
  return layer;
}

absl::StatusOr<LinearLayerSetup> SetUpLinearLayer(const std::string& arch,
                                                  ArtifactCache& cache,
                                                  uint64_t seed) {
  ASSIGN_OR_RETURN(v1::KernelSet set, LinearLayerSet(arch));
  LinearLayerSetup setup;
  ASSIGN_OR_RETURN(setup.host, HostLinearLayer::Make(seed));
  ASSIGN_OR_RETURN(std::unique_ptr<LoadedKernelSet> loaded,
                   LoadedKernelSet::Load(set, cache));
  setup.set = std::move(loaded);
  setup.checkpoint = std::make_unique<DeviceCheckpoint>();
  RETURN_IF_ERROR(setup.checkpoint->Upload(setup.host));
  return setup;
}

absl::Status DeviceCheckpoint::Upload(const HostLinearLayer& host) {
  const DequantInputs& in = host.inputs;
  RETURN_IF_ERROR(weights.Allocate(in.weights.size() * sizeof(uint32_t),
                                   in.weights.data()));
  RETURN_IF_ERROR(scales.Allocate(in.scales.size(), in.scales.data()));
  RETURN_IF_ERROR(
      zero_points.Allocate(in.zero_points.size(), in.zero_points.data()));
  return bias.Allocate(host.bias_bits.size() * 2, host.bias_bits.data());
}

CheckpointWeights DeviceCheckpoint::Weights() const {
  CheckpointWeights out;
  out.weights = weights.get();
  out.scales = scales.get();
  out.zero_points = zero_points.get();
  out.bias = bias.get();
  return out;
}

Activations MakeActivations(const HostLinearLayer& host, int64_t m,
                            uint64_t seed) {
  const DataType act = host.spec.activation_type;
  std::mt19937_64 rng(seed + 2 + static_cast<uint64_t>(m));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Activations x;
  x.m = m;
  x.bits.resize(m * kLinearLayerK);
  x.values.resize(m * kLinearLayerK);
  for (int64_t i = 0; i < m * kLinearLayerK; ++i) {
    x.bits[i] = static_cast<uint16_t>(ReferenceEncodeFloat(uniform(rng), act));
    x.values[i] = ReferenceDecodeScale(act, x.bits[i]);
  }
  return x;
}

double OutputError(const HostLinearLayer& host, const Activations& x,
                   const std::vector<uint16_t>& y_bits) {
  const int64_t m = x.m;
  const int64_t n = kLinearLayerN;
  const int64_t k = kLinearLayerK;
  const DataType out = host.spec.output_type;
  std::vector<double> errors(m, 0.0), norms(m, 0.0);
  std::vector<int64_t> non_finite(m, 0);
  ParallelFor(m, [&](int worker, int workers) {
    for (int64_t row = worker; row < m; row += workers) {
      for (int64_t col = 0; col < n; ++col) {
        double ref = host.bias[col];
        for (int64_t i = 0; i < k; ++i) {
          ref +=
              static_cast<double>(x.values[row * k + i]) * host.w[col * k + i];
        }
        const double got = ReferenceDecodeScale(out, y_bits[row * n + col]);
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

absl::StatusOr<double> ForwardError(const QuantizedLinear& layer,
                                    const HostLinearLayer& host, int64_t m,
                                    uint64_t seed) {
  const Activations x = MakeActivations(host, m, seed);
  std::vector<uint16_t> y_bits(m * kLinearLayerN);
  DeviceBuffer x_device, y_device;
  RETURN_IF_ERROR(x_device.Allocate(x.bits.size() * 2, x.bits.data()));
  RETURN_IF_ERROR(y_device.Allocate(y_bits.size() * 2));
  RETURN_IF_ERROR(y_device.Fill(0xFF));  // NaN in fp16
  RETURN_IF_ERROR(
      layer.Forward(x_device.get(), y_device.get(), m, /*stream=*/nullptr));
  ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
  RETURN_IF_ERROR(CudaCheck(api->cuCtxSynchronize(), "Forward"));
  RETURN_IF_ERROR(y_device.Download(y_bits.data(), y_bits.size() * 2));
  return OutputError(host, x, y_bits);
}

}  // namespace hummingd::gpu::testing
