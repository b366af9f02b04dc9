#pragma once

// Model kernel manifests: the layers of a model and the kernels they need,
// in YAML or JSON (JSON is read as YAML). Format (README "Manifests"):
//
//   model: llama-3-8b-w4a16          # optional, informational
//   arch: sm_90a                     # default GPU for every layer
//   family: dequant                  # default family: dequant | gemm
//   spec: weight=uint4,group=128,... # default spec (text form)
//   max_m: 64                        # default KernelRequest.max_m (0: all)
//   layers:
//     - {name: qkv_proj, n: 6144, k: 4096}
//     - {name: experts.w13, n: 1536, k: 2048, kind: moe_indexed,
//        experts: 128, top_k: 8, spec: "...", family: gemm, arch: sm_80,
//        max_m: 8}
//
// A bare list of layers is accepted as well.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hummingd/v1/kernel_service.pb.h"
#include "kernels/launch_abi.h"

namespace hummingd {

struct ManifestOptions {
  std::string arch_override;  // non-empty: replaces every layer's arch
  // Every request's launch_abi (kernels/launch_abi.h). A manifest names
  // layers, not clients, so it has no key for it: the default warms the
  // plans clients of this build ask for; a fleet still running older
  // clients prefetches again with their value (hummingctl --launch-abi).
  uint32_t launch_abi = kCurrentLaunchAbi;
  // Set: replaces every layer's max_m (hummingctl prefetch --max-m), 0
  // included (every range).
  std::optional<uint32_t> max_m_override;
};

// Returns one KernelRequest per layer (names kept). Structural errors are
// INVALID_ARGUMENT naming the layer index and key ("layers[3].n: …"); spec
// and shape rules are checked by the daemon.
absl::StatusOr<std::vector<v1::KernelRequest>> ParseManifest(
    const std::string& text, const ManifestOptions& options);
absl::StatusOr<std::vector<v1::KernelRequest>> LoadManifestFile(
    const std::string& path, const ManifestOptions& options);

}  // namespace hummingd
