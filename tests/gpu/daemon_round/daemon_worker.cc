// gpu_daemon_worker: one inference-worker process of the GPU round. Resolves
// a fixed set of dequant layers from the node daemon through the client SDK
// (daemon mode), loads them with the driver API, runs Dequantize on fresh
// random data with NaN-poisoned outputs and checks every element against the
// CPU reference. Prints one line per layer and a final "keys:" line (the
// artifact keys it was served, sorted) so that the round script can check
// that two workers got the same kernels.
//
//   gpu_daemon_worker SOCKET
// Exit: 0 all layers exact, 1 a mismatch or an error, 2 no GPU / bad usage.

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/gpu/dequantize.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "hummingd/kernel_client.h"
#include "tests/gpu/daemon_round/linear_check.h"
#include "tests/gpu/dequant_inputs.h"
#include "tests/gpu/gpu_test_support.h"

namespace {

struct Layer {
  const char* spec;
  int64_t n;
  int64_t k;
};

// One layer per weight family the daemon serves, at real and odd shapes.
constexpr Layer kLayers[] = {
    {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4096, 4096},
    {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16", 6144,
     4096},
    {"weight=uint8,group=channel,scale=fp32,act=bf16,out=bf16", 1024, 2048},
    {"weight=uint3,group=64,scale=fp16,act=fp16,out=fp16", 96, 384},
    {"weight=int4,group=32,scale=fp16,act=fp16,out=fp16", 33, 384},
    {"weight=e4m3,group=128x128,scale=fp32,act=bf16,out=bf16", 512, 1024},
    {"weight=e2m1,group=16,scale=e4m3,scale2=tensor,act=bf16,out=bf16", 256,
     1024},
    {"weight=e2m1,group=32,scale=ue8m0,act=bf16,out=bf16", 90, 2880},
    {"weight=uint4,group=64,scale=fp16,zero=float,act=fp16,out=fp16", 128, 512},
};

// GEMM layers through QuantizedLinear: real projection shapes and odd ones,
// M values in each of the decode token ranges the planner uses (1-5, 6-8,
// 9-16, 17-32, 33-64) and three prefill sizes. gemm_gpu_test covers every
// range of every plan through its own launcher; this covers the layer API.
constexpr Layer kLinearLayers[] = {
    {"weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4096, 4096},
    {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16,bias=1",
     6144, 4096},
    {"weight=uint8,group=channel,scale=fp16,act=fp16,out=fp16", 1024, 2048},
    {"weight=e4m3,group=128x128,scale=fp32,act=bf16,out=bf16", 512, 1024},
    {"weight=e2m1,group=16,scale=e4m3,scale2=tensor,act=bf16,out=bf16", 256,
     1024},
    {"weight=uint3,group=64,scale=fp16,act=fp16,out=fp16", 80, 384},
};
constexpr int64_t kLinearMs[] = {1, 7, 12, 17, 48, 100, 300, 1100};

int Fail(const std::string& what) {
  std::printf("worker: FAILED: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hummingd;
  if (argc != 2) {
    std::fprintf(stderr, "usage: gpu_daemon_worker SOCKET\n");
    return 2;
  }
  const std::string no_gpu = gpu::testing::NoGpuReason();
  if (!no_gpu.empty()) {
    std::printf("worker: skipped: no GPU (%s)\n", no_gpu.c_str());
    return 2;
  }
  const gpu::CudaDevice& device = gpu::testing::TestDevice();
  const std::string arch = gpu::testing::TestArch(device);

  client::ClientOptions options;
  options.mode = client::ResolveMode::kDaemon;
  options.socket_path = argv[1];
  auto kernel_client = client::KernelClient::Create(options);
  if (!kernel_client.ok()) {
    return Fail(std::string(kernel_client.status().message()));
  }

  gpu::ArtifactCache artifacts;
  std::vector<std::string> keys;
  const uint64_t seed = gpu::testing::TestSeed();
  int64_t mismatches = 0;
  for (const Layer& layer : kLayers) {
    v1::KernelRequest request;
    request.set_family(v1::KERNEL_FAMILY_DEQUANT);
    request.mutable_spec()->set_text(layer.spec);
    request.mutable_shape()->set_n(layer.n);
    request.mutable_shape()->set_k(layer.k);
    request.mutable_gpu()->set_arch(arch);
    auto set = (*kernel_client)->Resolve(request);
    if (!set.ok()) return Fail(std::string(set.status().message()));
    auto loaded = gpu::LoadedKernelSet::Load(**set, artifacts);
    if (!loaded.ok()) return Fail(std::string(loaded.status().message()));
    for (const v1::Kernel& kernel : (*set)->kernels()) {
      keys.push_back(kernel.artifact_key());
    }

    gpu::testing::DeviceDequantLayer data;
    absl::Status status = data.Init(layer.spec, layer.n, layer.k, seed);
    if (status.ok()) status = data.PoisonOutput();
    if (status.ok()) {
      status = gpu::Dequantize(**loaded, data.buffers(), /*stream=*/nullptr);
    }
    if (status.ok()) {
      status = gpu::CudaCheck((*loaded)->driver().cuCtxSynchronize(),
                              "cuCtxSynchronize");
    }
    if (!status.ok()) return Fail(std::string(status.message()));
    auto output = data.DownloadOutput();
    if (!output.ok()) return Fail(std::string(output.status().message()));
    std::string first_few;
    const int64_t bad = data.CountMismatches(*output, &first_few);
    mismatches += bad;
    std::printf("worker: %-62s %5lldx%-5lld %s\n", layer.spec,
                static_cast<long long>(layer.n),
                static_cast<long long>(layer.k),
                bad == 0 ? "exact" : ("MISMATCH " + first_few).c_str());
  }
  int linear_failures = 0;
  for (const Layer& layer : kLinearLayers) {
    auto checked = gpu::testing::CheckQuantizedLinear(
        **kernel_client, artifacts, layer.spec, layer.n, layer.k,
        std::vector<int64_t>(std::begin(kLinearMs), std::end(kLinearMs)), arch,
        seed);
    if (!checked.ok()) return Fail(std::string(checked.status().message()));
    const bool ok = checked->non_finite == 0 &&
                    checked->worst_relative_error <= checked->bound;
    if (!ok) ++linear_failures;
    keys.insert(keys.end(), checked->artifact_keys.begin(),
                checked->artifact_keys.end());
    std::printf("linear: %-62s %5lldx%-5lld rel_err=%.2e (bound %.0e) %s\n",
                layer.spec, static_cast<long long>(layer.n),
                static_cast<long long>(layer.k), checked->worst_relative_error,
                checked->bound, ok ? "ok" : "FAILED");
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::printf("worker: %zu layers, %lld mismatching elements, %s\n",
              std::size(kLayers), static_cast<long long>(mismatches),
              gpu::testing::SeedTrace(seed).c_str());
  std::printf("keys: %s\n", absl::StrJoin(keys, ",").c_str());
  std::printf("linear: %zu layers x %zu M values, %d failed\n",
              std::size(kLinearLayers), std::size(kLinearMs), linear_failures);
  return mismatches == 0 && linear_failures == 0 ? 0 : 1;
}
