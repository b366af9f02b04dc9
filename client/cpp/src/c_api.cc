// The C ABI over KernelClient: statuses become codes plus a per-thread,
// per-handle message; no C++ type or exception crosses it.

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/cpp/src/c_api_handles.h"
#include "ctl/manifest.h"
#include "hummingd/hummingd.h"
#include "hummingd/kernel_client.h"

using hummingd::client::ClientOptions;
using hummingd::client::KernelClient;
using hummingd::client::ResolveMode;

namespace {

hummingd_status Fail(hummingd_client* client, const absl::Status& status) {
  return client->errors.Record(status);
}

const hummingd::v1::Kernel* KernelAt(const hummingd_kernel_set* set,
                                     int index) {
  if (set == nullptr || index < 0 || index >= set->set->kernels_size()) {
    return nullptr;
  }
  return &set->set->kernels(index);
}

void CopyMessage(const absl::Status& status, char* error, size_t error_size) {
  if (error == nullptr || error_size == 0) return;
  const size_t length = std::min(status.message().size(), error_size - 1);
  std::memcpy(error, status.message().data(), length);
  error[length] = '\0';
}

}  // namespace

extern "C" {

const char* hummingd_status_name(hummingd_status status) {
  switch (status) {
    case HUMMINGD_OK:
      return "OK";
    case HUMMINGD_CANCELLED:
      return "CANCELLED";
    case HUMMINGD_UNKNOWN:
      return "UNKNOWN";
    case HUMMINGD_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case HUMMINGD_DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case HUMMINGD_NOT_FOUND:
      return "NOT_FOUND";
    case HUMMINGD_ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case HUMMINGD_PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case HUMMINGD_RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case HUMMINGD_FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case HUMMINGD_ABORTED:
      return "ABORTED";
    case HUMMINGD_OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case HUMMINGD_UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case HUMMINGD_INTERNAL:
      return "INTERNAL";
    case HUMMINGD_UNAVAILABLE:
      return "UNAVAILABLE";
    case HUMMINGD_DATA_LOSS:
      return "DATA_LOSS";
    case HUMMINGD_UNAUTHENTICATED:
      return "UNAUTHENTICATED";
  }
  return "UNKNOWN";
}

hummingd_status hummingd_client_create(hummingd_mode mode, const char* socket,
                                       const char* cache_dir,
                                       hummingd_client** out, char* error,
                                       size_t error_size) {
  if (out == nullptr) {
    CopyMessage(absl::InvalidArgumentError("out: must not be NULL"), error,
                error_size);
    return HUMMINGD_INVALID_ARGUMENT;
  }
  *out = nullptr;
  ClientOptions options;
  switch (mode) {
    case HUMMINGD_MODE_AUTO:
      options.mode = ResolveMode::kAuto;
      break;
    case HUMMINGD_MODE_DAEMON:
      options.mode = ResolveMode::kDaemon;
      break;
    case HUMMINGD_MODE_EMBEDDED:
      options.mode = ResolveMode::kEmbedded;
      break;
    default: {
      const absl::Status status = absl::InvalidArgumentError(absl::StrCat(
          "mode: must be HUMMINGD_MODE_AUTO, _DAEMON or _EMBEDDED (got ",
          static_cast<int>(mode), ")"));
      CopyMessage(status, error, error_size);
      return HUMMINGD_INVALID_ARGUMENT;
    }
  }
  if (socket != nullptr) options.socket_path = socket;
  if (cache_dir != nullptr) options.embedded_cache_dir = cache_dir;
  auto client = KernelClient::Create(options);
  if (!client.ok()) {
    CopyMessage(client.status(), error, error_size);
    return static_cast<hummingd_status>(client.status().code());
  }
  *out = new hummingd_client();
  (*out)->client = *std::move(client);
  return HUMMINGD_OK;
}

void hummingd_client_destroy(hummingd_client* client) { delete client; }

hummingd_mode hummingd_client_mode(const hummingd_client* client) {
  // No status to return it through: AUTO is the one value a live client
  // never reports, so it cannot be taken for one.
  if (client == nullptr) return HUMMINGD_MODE_AUTO;
  return client->client->mode() == ResolveMode::kDaemon
             ? HUMMINGD_MODE_DAEMON
             : HUMMINGD_MODE_EMBEDDED;
}

const char* hummingd_client_last_error(hummingd_client* client) {
  if (client == nullptr) return "client: must not be NULL";
  return client->errors.Last();
}

hummingd_status hummingd_resolve(hummingd_client* client, const char* spec_text,
                                 const char* family, int64_t n, int64_t k,
                                 const char* arch, hummingd_kernel_set** out) {
  return hummingd_resolve_max_m(client, spec_text, family, n, k, arch,
                                /*max_m=*/0, out);
}

hummingd_status hummingd_resolve_max_m(hummingd_client* client,
                                       const char* spec_text,
                                       const char* family, int64_t n, int64_t k,
                                       const char* arch, uint32_t max_m,
                                       hummingd_kernel_set** out) {
  if (out != nullptr) *out = nullptr;
  if (client == nullptr) return HUMMINGD_INVALID_ARGUMENT;
  for (const auto& [name, value] :
       {std::pair<const char*, const void*>{"spec_text", spec_text},
        {"family", family},
        {"arch", arch},
        {"out", out}}) {
    if (value == nullptr) {
      return Fail(client, absl::InvalidArgumentError(
                              absl::StrCat(name, ": must not be NULL")));
    }
  }
  hummingd::v1::KernelRequest request;
  const std::string family_text = family;
  if (family_text == "dequant") {
    request.set_family(hummingd::v1::KERNEL_FAMILY_DEQUANT);
  } else if (family_text == "gemm") {
    request.set_family(hummingd::v1::KERNEL_FAMILY_GEMM);
  } else {
    return Fail(client, absl::InvalidArgumentError(absl::StrCat(
                            "family: must be \"dequant\" or \"gemm\" (got \"",
                            family_text, "\")")));
  }
  request.mutable_spec()->set_text(spec_text);
  request.mutable_shape()->set_n(n);
  request.mutable_shape()->set_k(k);
  request.mutable_shape()->set_kind(hummingd::v1::GEMM_KIND_DENSE);
  request.mutable_gpu()->set_arch(arch);
  request.set_max_m(max_m);
  auto resolved = client->client->Resolve(request);
  if (!resolved.ok()) return Fail(client, resolved.status());

  auto handle = std::make_unique<hummingd_kernel_set>();
  handle->set = *std::move(resolved);
  absl::flat_hash_map<std::string, const std::string*> by_key;
  for (const hummingd::v1::Kernel& kernel : handle->set->kernels()) {
    if (!kernel.cubin().empty())
      by_key.emplace(kernel.artifact_key(), &kernel.cubin());
  }
  for (const hummingd::v1::Kernel& kernel : handle->set->kernels()) {
    auto it = by_key.find(kernel.artifact_key());
    handle->cubins.push_back(it == by_key.end() ? nullptr : it->second);
  }
  *out = handle.release();
  return HUMMINGD_OK;
}

hummingd_status hummingd_prefetch_manifest(hummingd_client* client,
                                           const char* path) {
  if (client == nullptr) return HUMMINGD_INVALID_ARGUMENT;
  if (path == nullptr) {
    return Fail(client, absl::InvalidArgumentError("path: must not be NULL"));
  }
  auto requests = hummingd::LoadManifestFile(path, hummingd::ManifestOptions());
  if (!requests.ok()) return Fail(client, requests.status());
  absl::Status status = client->client->Prefetch(*requests, nullptr);
  if (!status.ok()) return Fail(client, status);
  return HUMMINGD_OK;
}

void hummingd_kernel_set_destroy(hummingd_kernel_set* set) { delete set; }

int hummingd_kernel_set_size(const hummingd_kernel_set* set) {
  return set == nullptr ? 0 : set->set->kernels_size();
}

const char* hummingd_kernel_set_canonical_spec(const hummingd_kernel_set* set) {
  return set == nullptr ? nullptr : set->set->canonical_spec().c_str();
}

int hummingd_kernel_set_find(const hummingd_kernel_set* set, int64_t m) {
  for (int i = 0; i < hummingd_kernel_set_size(set); ++i) {
    const hummingd::v1::Kernel& kernel = set->set->kernels(i);
    if (kernel.m_min() <= m && m <= kernel.m_max()) return i;
  }
  return -1;
}

int64_t hummingd_kernel_m_min(const hummingd_kernel_set* set, int index) {
  const hummingd::v1::Kernel* kernel = KernelAt(set, index);
  return kernel == nullptr ? 0 : kernel->m_min();
}

int64_t hummingd_kernel_m_max(const hummingd_kernel_set* set, int index) {
  const hummingd::v1::Kernel* kernel = KernelAt(set, index);
  return kernel == nullptr ? 0 : kernel->m_max();
}

const char* hummingd_kernel_entry(const hummingd_kernel_set* set, int index) {
  const hummingd::v1::Kernel* kernel = KernelAt(set, index);
  return kernel == nullptr ? nullptr : kernel->entry().c_str();
}

const char* hummingd_kernel_artifact_key(const hummingd_kernel_set* set,
                                         int index) {
  const hummingd::v1::Kernel* kernel = KernelAt(set, index);
  return kernel == nullptr ? nullptr : kernel->artifact_key().c_str();
}

const char* hummingd_kernel_config(const hummingd_kernel_set* set, int index) {
  const hummingd::v1::Kernel* kernel = KernelAt(set, index);
  return kernel == nullptr ? nullptr : kernel->config().c_str();
}

const void* hummingd_kernel_cubin(const hummingd_kernel_set* set, int index,
                                  size_t* size) {
  const std::string* cubin =
      KernelAt(set, index) == nullptr ? nullptr : set->cubins[index];
  if (size != nullptr) *size = cubin == nullptr ? 0 : cubin->size();
  return cubin == nullptr ? nullptr : cubin->data();
}

hummingd_status hummingd_kernel_launch_params(const hummingd_kernel_set* set,
                                              int index,
                                              hummingd_launch_params* out) {
  const hummingd::v1::Kernel* kernel = KernelAt(set, index);
  if (kernel == nullptr || out == nullptr) {
    return kernel == nullptr ? HUMMINGD_OUT_OF_RANGE
                             : HUMMINGD_INVALID_ARGUMENT;
  }
  const hummingd::v1::LaunchParams& launch = kernel->launch();
  out->block_x = launch.block_x();
  out->grid_x = launch.grid_x();
  out->grid_y = launch.grid_y();
  out->grid_z = launch.grid_z();
  out->m_per_block_x = launch.m_per_block_x();
  out->dynamic_shared_memory = launch.dynamic_shared_memory();
  out->threads_per_block = kernel->threads_per_block();
  return HUMMINGD_OK;
}

}  // extern "C"
