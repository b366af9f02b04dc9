#include "tests/integration/client/client_test_util.h"

namespace hummingd::testing {

v1::KernelRequest LayerRequest(int64_t n, int64_t k, const std::string& arch,
                               const std::string& spec) {
  return DequantRequest(n, k, spec, arch).request();
}

client::ClientOptions ClientOptionsFor(client::ResolveMode mode,
                                       const std::string& socket_path,
                                       const std::string& cache_dir) {
  client::ClientOptions options;
  options.mode = mode;
  options.socket_path = socket_path;
  options.embedded_cache_dir = cache_dir;
  options.timeout_seconds = 120;
  options.embedded_compile_threads = 2;
  return options;
}

v1::KernelSet WithoutCallFields(v1::KernelSet set) {
  set.clear_plan_cached();
  for (v1::Kernel& kernel : *set.mutable_kernels()) {
    kernel.clear_outcome();
    kernel.clear_compile_ms();
  }
  return set;
}

std::map<std::string, std::string> CubinsByKey(const v1::KernelSet& set) {
  std::map<std::string, std::string> cubins;
  for (const v1::Kernel& kernel : set.kernels()) {
    if (!kernel.cubin().empty()) cubins[kernel.artifact_key()] = kernel.cubin();
  }
  return cubins;
}

uint64_t Fnv1a64(const std::string& bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace hummingd::testing
