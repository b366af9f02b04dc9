#pragma once

// Key schema (ARCHITECTURE.md, "Keys"): SHA-256 over length-prefixed, named
// fields. No path, environment variable or timestamp ever enters a key.

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/plan.h"

namespace hummingd {

// Bumped when the layout of keys or values changes; a store opened on a
// directory of another version starts it afresh (cache/README.md).
// 4: plan keys record the client's launch ABI.
inline constexpr int kCacheSchemaVersion = 4;

struct PlanKeyInputs {
  KernelFamily family = KernelFamily::kDequant;
  std::string canonical_spec;  // FormatSpecText(Canonicalize(spec))
  LayerShape shape;
  std::string planner_gpu_fields;  // PlannerGpuFields(family, gpu)
  int planner_version = 0;
  // PlanKeyLaunchAbi(request): two clients that launch with different
  // launch ABIs may get different plans, so they never share one.
  uint32_t launch_abi = 0;
};

struct ArtifactKeyInputs {
  std::string codegen_hash;                  // CodegenHash()
  std::string toolchain;                     // Toolchain().Identity()
  std::string arch;                          // "sm_90a"
  std::vector<std::string> compile_options;  // CanonicalCompileOptions(gpu)
  std::string canonical_spec;
  LayerShape shape;
  std::string skeleton;     // KernelConfig::skeleton
  std::string config_text;  // KernelConfig::text
};

// 64 lower-case hex characters each.
std::string PlanKey(const PlanKeyInputs& inputs);
std::string ArtifactKey(const ArtifactKeyInputs& inputs);

}  // namespace hummingd
