#pragma once

// The C ABI's opaque handles (hummingd.h), shared by the host-side
// (c_api.cc) and device-side (c_api_device.cc) halves.

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "hummingd/gpu/quantized_linear.h"
#include "hummingd/hummingd.h"
#include "hummingd/kernel_client.h"

namespace hummingd::c_api {

// The message of each thread's last failure on one handle.
class ErrorSlots {
 public:
  hummingd_status Record(const absl::Status& status) {
    std::lock_guard<std::mutex> lock(mutex_);
    messages_[std::this_thread::get_id()] = std::string(status.message());
    return static_cast<hummingd_status>(status.code());
  }
  const char* Last() {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = messages_.find(std::this_thread::get_id());
    return it == messages_.end() ? "" : it->second.c_str();
  }

 private:
  std::mutex mutex_;
  // Node-based so that a returned c_str() survives other threads' inserts.
  std::unordered_map<std::thread::id, std::string> messages_;
};

}  // namespace hummingd::c_api

struct hummingd_client {
  std::unique_ptr<hummingd::client::KernelClient> client;
  hummingd::c_api::ErrorSlots errors;
  // Device side: every artifact loads once per process and client.
  hummingd::gpu::ArtifactCache artifacts;
};

struct hummingd_kernel_set {
  std::shared_ptr<const hummingd::v1::KernelSet> set;
  std::vector<const std::string*> cubins;  // per kernel, shared by key
  // Loaded on first device use (hummingd_dequantize, hummingd_layer_create)
  // in each context and device: a loaded set launches on the device it was
  // loaded for (its kernels' shared memory limit is raised there; before
  // CUDA 12 its functions belong to the context). Entries are not dropped
  // when their context is destroyed (the C ABI is not told), so the map is
  // bounded: Loaded() empties it once it holds kMaxLoadedContexts entries
  // (layers keep their own reference; a later call reloads, which costs
  // lookups in the client's ArtifactCache, not driver loads).
  static constexpr size_t kMaxLoadedContexts = 64;
  std::mutex loaded_mutex;
  absl::flat_hash_map<std::pair<CUcontext, CUdevice>,
                      std::shared_ptr<const hummingd::gpu::LoadedKernelSet>>
      loaded;
};

struct hummingd_layer {
  std::unique_ptr<hummingd::gpu::QuantizedLinear> linear;
  hummingd::c_api::ErrorSlots errors;
};
