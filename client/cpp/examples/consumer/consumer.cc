// Resolves one layer's kernel set with the C++ SDK and prints its M-range
// table.

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "hummingd/kernel_client.h"

namespace {

constexpr char kUsage[] =
    "usage: consumer_cpp [--mode auto|daemon|embedded] [--socket PATH]\n"
    "                    [--cache-dir DIR] SPEC N K ARCH\n"
    "example: consumer_cpp weight=uint4,group=128 4096 4096 sm_90a\n";

int Usage(int code) {
  (code == 0 ? std::cout : std::cerr) << kUsage;
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  hummingd::client::ClientOptions options;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return Usage(0);
    if ((arg == "--mode" || arg == "--socket" || arg == "--cache-dir") &&
        i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--socket") {
        options.socket_path = value;
      } else if (arg == "--cache-dir") {
        options.embedded_cache_dir = value;
      } else if (value == "auto") {
        options.mode = hummingd::client::ResolveMode::kAuto;
      } else if (value == "daemon") {
        options.mode = hummingd::client::ResolveMode::kDaemon;
      } else if (value == "embedded") {
        options.mode = hummingd::client::ResolveMode::kEmbedded;
      } else {
        return Usage(2);
      }
      continue;
    }
    positional.push_back(arg);
  }
  if (positional.size() != 4) return Usage(2);

  hummingd::v1::KernelRequest request;
  request.set_family(hummingd::v1::KERNEL_FAMILY_DEQUANT);
  request.mutable_spec()->set_text(positional[0]);
  request.mutable_shape()->set_n(std::atoll(positional[1].c_str()));
  request.mutable_shape()->set_k(std::atoll(positional[2].c_str()));
  request.mutable_gpu()->set_arch(positional[3]);

  auto client = hummingd::client::KernelClient::Create(options);
  if (!client.ok()) {
    std::cerr << "consumer_cpp: " << client.status() << "\n";
    return 1;
  }
  std::cout << "mode: "
            << ((*client)->mode() == hummingd::client::ResolveMode::kDaemon
                    ? "daemon"
                    : "embedded")
            << "\n";
  auto set = (*client)->Resolve(request);
  if (!set.ok()) {
    std::cerr << "consumer_cpp: " << set.status() << "\n";
    return 1;
  }
  std::cout << "spec: " << (*set)->canonical_spec() << "\n";
  for (const hummingd::v1::Kernel& kernel : (*set)->kernels()) {
    std::cout << kernel.m_min() << ".." << kernel.m_max() << " "
              << kernel.entry() << " " << kernel.artifact_key().substr(0, 16)
              << "\n";
  }
  return 0;
}
