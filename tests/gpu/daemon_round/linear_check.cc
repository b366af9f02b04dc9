#include "tests/gpu/daemon_round/linear_check.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "hummingd/gpu/quantized_linear.h"
#include "kernels/launch_abi.h"
#include "kernels/reference/dequant_reference.h"
#include "kernels/reference/format_reference.h"
#include "tests/gpu/gpu_test_support.h"

namespace hummingd::gpu::testing {
namespace {

// Uploads `inputs`' checkpoint tensors (kept alive by the caller).
struct CheckpointBuffers {
  DeviceBuffer weights, scales, zero_points, secondary, bias;
};

}  // namespace

absl::StatusOr<LinearCheckResult> CheckQuantizedLinear(
    client::KernelClient& kernel_client, ArtifactCache& artifacts,
    const std::string& spec_text, int64_t n, int64_t k,
    const std::vector<int64_t>& ms, const std::string& arch, uint64_t seed) {
  ASSIGN_OR_RETURN(QuantSpec spec, ParseSpecText(spec_text));
  LayerShape shape;
  shape.n = n;
  shape.k = k;

  v1::KernelRequest request;
  request.set_family(v1::KERNEL_FAMILY_GEMM);
  request.mutable_spec()->set_text(spec_text);
  request.mutable_shape()->set_n(n);
  request.mutable_shape()->set_k(k);
  request.mutable_gpu()->set_arch(arch);
  // The layout QuantizedLinear passes (KernelClient would fill it in too).
  request.set_launch_abi(kCurrentLaunchAbi);
  ASSIGN_OR_RETURN(std::shared_ptr<const v1::KernelSet> set,
                   kernel_client.Resolve(request));
  ASSIGN_OR_RETURN(std::unique_ptr<LoadedKernelSet> loaded_unique,
                   LoadedKernelSet::Load(*set, artifacts));
  std::shared_ptr<const LoadedKernelSet> loaded = std::move(loaded_unique);

  LinearCheckResult result;
  for (const auto* kernels : {&set->kernels(), &set->prepare()}) {
    for (const v1::Kernel& kernel : *kernels) {
      result.artifact_keys.push_back(kernel.artifact_key());
    }
  }
  result.bound = spec.activation_type == DataType::kBf16 ? 8e-3 : 1e-3;

  // Checkpoint weights and the exact fp32 weights they stand for.
  const DequantInputs inputs = MakeRandomDequantInputs(spec, shape, seed);
  ASSIGN_OR_RETURN(std::vector<float> w,
                   ReferenceDequantize(spec, shape, inputs));
  std::mt19937_64 rng(seed ^ 0x9E3779B97F4A7C15ull);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<uint16_t> bias_bits;
  std::vector<double> bias(n, 0.0);
  if (spec.has_bias) {
    for (int64_t j = 0; j < n; ++j) {
      const uint32_t bits =
          ReferenceEncodeFloat(uniform(rng), spec.output_type);
      bias_bits.push_back(static_cast<uint16_t>(bits));
      bias[j] = ReferenceDecodeScale(spec.output_type, bits);
    }
  }
  CheckpointBuffers device;
  RETURN_IF_ERROR(device.weights.Allocate(
      inputs.weights.size() * sizeof(uint32_t), inputs.weights.data()));
  RETURN_IF_ERROR(
      device.scales.Allocate(inputs.scales.size(), inputs.scales.data()));
  RETURN_IF_ERROR(device.zero_points.Allocate(inputs.zero_points.size(),
                                              inputs.zero_points.data()));
  RETURN_IF_ERROR(
      device.secondary.Allocate(inputs.secondary_scales.size() * sizeof(float),
                                inputs.secondary_scales.data()));
  RETURN_IF_ERROR(device.bias.Allocate(bias_bits.size() * sizeof(uint16_t),
                                       bias_bits.data()));
  CheckpointWeights checkpoint;
  checkpoint.weights = device.weights.get();
  checkpoint.scales = device.scales.get();
  checkpoint.zero_points = device.zero_points.get();
  checkpoint.secondary_scale = device.secondary.get();
  checkpoint.bias = device.bias.get();

  const int64_t max_m = *std::max_element(ms.begin(), ms.end());
  // Scales off a 16-byte boundary are refused by name before anything is
  // launched (the decode kernels copy them in 16-byte windows).
  CheckpointWeights misaligned = checkpoint;
  misaligned.scales += DataTypeBytes(spec.scale_type);
  absl::StatusOr<std::unique_ptr<QuantizedLinear>> refused =
      QuantizedLinear::Create(loaded, misaligned, max_m, /*stream=*/nullptr);
  if (refused.ok() ||
      refused.status().code() != absl::StatusCode::kInvalidArgument ||
      !absl::StrContains(refused.status().message(),
                         "quantized_linear.scales: must be 16-byte aligned")) {
    return absl::InternalError(
        absl::StrCat("misaligned scales: want INVALID_ARGUMENT naming "
                     "quantized_linear.scales, got ",
                     refused.ok() ? "OK" : refused.status().ToString()));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<QuantizedLinear> layer,
                   QuantizedLinear::Create(loaded, checkpoint, max_m,
                                           /*stream=*/nullptr));
  for (const int64_t m : ms) {
    std::vector<uint16_t> x_bits(m * k);
    std::vector<double> x(m * k);
    for (int64_t i = 0; i < m * k; ++i) {
      const uint32_t bits =
          ReferenceEncodeFloat(uniform(rng), spec.activation_type);
      x_bits[i] = static_cast<uint16_t>(bits);
      x[i] = ReferenceDecodeScale(spec.activation_type, bits);
    }
    DeviceBuffer x_device, y_device;
    RETURN_IF_ERROR(x_device.Allocate(x_bits.size() * 2, x_bits.data()));
    RETURN_IF_ERROR(y_device.Allocate(static_cast<size_t>(m * n * 2)));
    RETURN_IF_ERROR(y_device.Fill(0xFF));  // NaN in fp16 and bf16
    RETURN_IF_ERROR(layer->Forward(x_device.get(), y_device.get(), m,
                                   /*stream=*/nullptr));
    RETURN_IF_ERROR(CudaCheck(loaded->driver().cuCtxSynchronize(),
                              absl::StrCat("Forward m=", m)));
    std::vector<uint16_t> y_bits(m * n);
    RETURN_IF_ERROR(y_device.Download(y_bits.data(), y_bits.size() * 2));

    // The fp64 reference of every element, rows spread over the host's
    // cores (an M=1100 layer is tens of billions of multiply-adds).
    const int threads =
        std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    std::vector<double> errors(threads, 0), norms(threads, 0);
    std::vector<int64_t> non_finite(threads, 0);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        for (int64_t row = t; row < m; row += threads) {
          for (int64_t col = 0; col < n; ++col) {
            double ref = bias[col];
            const double* x_row = &x[row * k];
            const float* w_row = &w[col * k];
            for (int64_t i = 0; i < k; ++i) ref += x_row[i] * w_row[i];
            const double got =
                ReferenceDecodeScale(spec.output_type, y_bits[row * n + col]);
            if (!std::isfinite(got)) {
              ++non_finite[t];
              continue;
            }
            errors[t] += (got - ref) * (got - ref);
            norms[t] += ref * ref;
          }
        }
      });
    }
    for (std::thread& worker : workers) worker.join();
    double error = 0, norm = 0;
    for (int t = 0; t < threads; ++t) {
      error += errors[t];
      norm += norms[t];
      result.non_finite += non_finite[t];
    }
    result.worst_relative_error = std::max(
        result.worst_relative_error, std::sqrt(error / std::max(norm, 1e-30)));
  }
  return result;
}

}  // namespace hummingd::gpu::testing
