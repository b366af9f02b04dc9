#pragma once

// The two record types the cache holds (ARCHITECTURE.md, "Keys").

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/plan.h"

namespace hummingd {

struct ArtifactRecord {
  std::string cubin;
  std::string entry;  // extern "C" symbol
  int threads_per_block = 0;
  int dynamic_shared_memory = 0;
  int registers = -1;  // -1 = unknown
  int spills = -1;     // -1 = unknown
  double compile_ms = 0;
  std::string toolchain;    // "nvrtc-13.0"
  std::string arch;         // "sm_90a"
  std::string description;  // human-readable: family, spec text, N, K, config
  uint64_t cubin_checksum = 0;  // Checksum64(cubin); filled by the store on Put

  bool operator==(const ArtifactRecord&) const = default;
};

struct PlanRecordEntry {
  // "" for a kernel of the M-range table; otherwise what a kernel run once,
  // when a layer's weights are prepared, does ("repack").
  std::string role;
  int64_t m_min = 1;
  int64_t m_max = 1;
  std::string artifact_key;
  KernelConfig config;
  LaunchParams launch;

  bool operator==(const PlanRecordEntry&) const = default;
};

struct PlanRecord {
  std::vector<PlanRecordEntry> entries;  // the M-range table
  std::vector<PlanRecordEntry> prepare;  // weight-preparation kernels
  std::string description;

  bool operator==(const PlanRecord&) const = default;
};

}  // namespace hummingd
