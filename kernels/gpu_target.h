#pragma once

// The GPU a kernel is planned and compiled for.

#include <string>

#include "absl/status/statusor.h"

namespace hummingd {

struct GpuTarget {
  int sm = 90;  // compute capability * 10 (75, 80, 86, 89, 90…)
  bool arch_specific = false;  // the "a" suffix (sm_90a): wgmma, setmaxnreg…
  int sm_count = 0;            // 0 = unknown
  int max_shared_memory_per_block_optin = 0;  // bytes, 0 = unknown
  std::string device_name;                    // informational, never keyed

  // "sm_90a", "sm_80": the spelling NVRTC's --gpu-architecture takes.
  std::string ArchName() const;

  bool operator==(const GpuTarget&) const = default;
};

// Parses "sm_75" … "sm_120a". Only archs NVRTC can target and the kernels
// support are accepted (sm_75, 80, 86, 87, 89, 90, 90a, 100, 100a, 120,
// 120a); anything else is INVALID_ARGUMENT naming the field "gpu.arch".
absl::StatusOr<GpuTarget> ParseGpuArch(std::string_view arch);

}  // namespace hummingd
