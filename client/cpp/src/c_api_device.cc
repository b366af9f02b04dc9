// The C ABI's device half: layers (QuantizedLinear) and dequantization over
// kernel sets resolved by the host half.

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/cpp/src/c_api_handles.h"
#include "common/status_macros.h"
#include "hummingd/gpu/dequantize.h"

namespace {

using hummingd::gpu::LoadedKernelSet;

// The set loaded for the calling thread's current context, once per handle
// and context. UseDevice on every call, not only the first: each thread
// gets device 0's primary context when it has none, and a thread whose
// current context is another device's gets a set loaded for that device.
absl::StatusOr<std::shared_ptr<const LoadedKernelSet>> Loaded(
    hummingd_client* client, const hummingd_kernel_set* set) {
  ASSIGN_OR_RETURN(const hummingd::gpu::CudaDevice device,
                   hummingd::gpu::UseDevice());
  ASSIGN_OR_RETURN(const hummingd::gpu::CudaDriverApi* api,
                   hummingd::gpu::CudaDriver());
  CUcontext context = nullptr;
  RETURN_IF_ERROR(hummingd::gpu::CudaCheck(api->cuCtxGetCurrent(&context),
                                           "cuCtxGetCurrent"));
  // With the device: a context's address may be reused by a later context
  // on another device.
  const std::pair<CUcontext, CUdevice> key(context, device.device);
  auto* mutable_set = const_cast<hummingd_kernel_set*>(set);
  std::lock_guard<std::mutex> lock(mutable_set->loaded_mutex);
  auto it = mutable_set->loaded.find(key);
  if (it != mutable_set->loaded.end()) return it->second;
  ASSIGN_OR_RETURN(std::unique_ptr<LoadedKernelSet> loaded,
                   LoadedKernelSet::Load(*set->set, client->artifacts));
  std::shared_ptr<const LoadedKernelSet> shared = std::move(loaded);
  // A process that keeps creating contexts would otherwise grow the map
  // for as long as the handle lives.
  if (mutable_set->loaded.size() >= hummingd_kernel_set::kMaxLoadedContexts) {
    mutable_set->loaded.clear();
  }
  mutable_set->loaded.emplace(key, shared);
  return shared;
}

hummingd::gpu::CheckpointWeights ToWeights(
    const hummingd_checkpoint_weights& weights) {
  hummingd::gpu::CheckpointWeights converted;
  converted.weights = static_cast<CUdeviceptr>(weights.weights);
  converted.scales = static_cast<CUdeviceptr>(weights.scales);
  converted.zero_points = static_cast<CUdeviceptr>(weights.zero_points);
  converted.secondary_scale = static_cast<CUdeviceptr>(weights.secondary_scale);
  converted.bias = static_cast<CUdeviceptr>(weights.bias);
  return converted;
}

}  // namespace

extern "C" {

hummingd_status hummingd_layer_create(
    hummingd_client* client, const hummingd_kernel_set* set,
    const hummingd_checkpoint_weights* weights, int64_t max_m, void* stream,
    hummingd_layer** out) {
  if (client == nullptr) return HUMMINGD_INVALID_ARGUMENT;
  if (set == nullptr || weights == nullptr || out == nullptr) {
    return client->errors.Record(
        absl::InvalidArgumentError("set, weights, out: must not be NULL"));
  }
  *out = nullptr;
  // Checked here as well as in QuantizedLinear::Create so that the refusal
  // does not depend on a driver being present to load the set first.
  const absl::Status family = hummingd::gpu::CheckKernelSetFamily(
      set->set->family(), hummingd::v1::KERNEL_FAMILY_GEMM,
      "hummingd_layer_create");
  if (!family.ok()) return client->errors.Record(family);
  absl::StatusOr<std::shared_ptr<const LoadedKernelSet>> loaded =
      Loaded(client, set);
  if (!loaded.ok()) return client->errors.Record(loaded.status());
  auto linear = hummingd::gpu::QuantizedLinear::Create(
      *loaded, ToWeights(*weights), max_m, static_cast<CUstream>(stream));
  if (!linear.ok()) return client->errors.Record(linear.status());
  auto* layer = new hummingd_layer();
  layer->linear = *std::move(linear);
  *out = layer;
  return HUMMINGD_OK;
}

hummingd_status hummingd_layer_forward(hummingd_layer* layer, uint64_t x,
                                       uint64_t y, int64_t m, void* stream) {
  if (layer == nullptr) return HUMMINGD_INVALID_ARGUMENT;
  const absl::Status status = layer->linear->Forward(
      static_cast<CUdeviceptr>(x), static_cast<CUdeviceptr>(y), m,
      static_cast<CUstream>(stream));
  return status.ok() ? HUMMINGD_OK : layer->errors.Record(status);
}

const char* hummingd_layer_last_error(hummingd_layer* layer) {
  if (layer == nullptr) return "layer: must not be NULL";
  return layer->errors.Last();
}

void hummingd_layer_destroy(hummingd_layer* layer) { delete layer; }

hummingd_status hummingd_dequantize(hummingd_client* client,
                                    const hummingd_kernel_set* set,
                                    const hummingd_checkpoint_weights* weights,
                                    uint64_t output, void* stream) {
  if (client == nullptr) return HUMMINGD_INVALID_ARGUMENT;
  if (set == nullptr || weights == nullptr) {
    return client->errors.Record(
        absl::InvalidArgumentError("set, weights: must not be NULL"));
  }
  // Before loading: a GEMM set's first kernel takes GemmArgs, twice the
  // size of the DequantArgs Dequantize passes.
  const absl::Status family = hummingd::gpu::CheckKernelSetFamily(
      set->set->family(), hummingd::v1::KERNEL_FAMILY_DEQUANT,
      "hummingd_dequantize");
  if (!family.ok()) return client->errors.Record(family);
  absl::StatusOr<std::shared_ptr<const LoadedKernelSet>> loaded =
      Loaded(client, set);
  if (!loaded.ok()) return client->errors.Record(loaded.status());
  hummingd::gpu::DequantBuffers buffers;
  buffers.weights = static_cast<CUdeviceptr>(weights->weights);
  buffers.scales = static_cast<CUdeviceptr>(weights->scales);
  buffers.zero_points = static_cast<CUdeviceptr>(weights->zero_points);
  buffers.secondary_scale = static_cast<CUdeviceptr>(weights->secondary_scale);
  buffers.output = static_cast<CUdeviceptr>(output);
  const absl::Status status = hummingd::gpu::Dequantize(
      **loaded, buffers, static_cast<CUstream>(stream));
  return status.ok() ? HUMMINGD_OK : client->errors.Record(status);
}

}  // extern "C"
