#pragma once

// A plan: the M-range table that maps a runtime token count M to a compiled
// kernel and how to launch it. Several ranges may share one kernel config (and
// so one cubin) with different launch parameters.

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/gpu_target.h"
#include "kernels/launch_abi.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"

namespace hummingd {

// Everything that identifies one kernel request.
struct KernelRequest {
  KernelFamily family = KernelFamily::kDequant;
  QuantSpec spec;  // canonical after validation
  LayerShape shape;
  GpuTarget gpu;
  // What the client passes to GEMM kernels (kernels/launch_abi.h).
  // Defaults to the oldest, so a request that forgets it is only ever given
  // kernels every client can launch.
  uint32_t launch_abi = kLaunchAbiOriginal;
  // The largest M the client will launch with (KernelRequest.max_m): 0 =
  // every range of the plan. It never changes the plan, only which of its
  // entries a set holds (the server cuts the set), so neither the planner
  // nor any key reads it: requests of every max_m share plans and cubins.
  uint32_t max_m = 0;
};

// One compile unit: which skeleton and its compile-time parameters. `text` is
// the canonical, key-stable form of the parameters ("threads=256,elems=32").
struct KernelConfig {
  KernelFamily family = KernelFamily::kDequant;
  std::string skeleton;  // e.g. "dequant"
  std::string text;
  int threads_per_block = 0;
  int dynamic_shared_memory = 0;

  bool operator==(const KernelConfig&) const = default;
};

// Grid = (grid_x * ceil(M / m_per_block_x) if m_per_block_x > 0 else grid_x,
//         grid_y, grid_z). Dequant kernels ignore M (m_per_block_x = 0).
struct LaunchParams {
  int block_x = 0;
  int64_t grid_x = 0;
  int64_t grid_y = 1;
  int64_t grid_z = 1;
  int64_t m_per_block_x = 0;
  int dynamic_shared_memory = 0;
  // GEMM split-K (grid_z > 1) only, 0 otherwise. A launch for M tokens
  // needs grid_x(M) * workspace_bytes_per_m_block bytes of fp32 workspace
  // (any contents) and grid_x(M) * counter_bytes_per_m_block bytes of u32
  // counters, zeroed once at allocation (GemmWorkspaceBytes /
  // GemmCounterBytes in kernels/gemm_config.h; layout in
  // kernels/device/schedule/split_k.cuh).
  int64_t workspace_bytes_per_m_block = 0;
  int64_t counter_bytes_per_m_block = 0;
  // The kernel may be launched as a programmatic dependent of the previous
  // kernel on the stream (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_
  // SERIALIZATION): it starts while that kernel drains, prefetches only
  // read-only inputs (weights, scales), and waits for it (griddepcontrol.wait)
  // before touching anything it may have written.
  bool programmatic_dependent_launch = false;

  bool operator==(const LaunchParams&) const = default;
};

// The largest M a default plan covers.
inline constexpr int64_t kDefaultMaxM = int64_t{1} << 20;

struct PlanEntry {
  int64_t m_min = 1;
  int64_t m_max = 1;  // inclusive
  KernelConfig config;
  LaunchParams launch;

  bool operator==(const PlanEntry&) const = default;
};

struct Plan {
  std::vector<PlanEntry> entries;  // sorted by m_min, contiguous, disjoint

  // The entry that serves M tokens, or nullptr outside the plan.
  const PlanEntry* EntryFor(int64_t m) const {
    for (const PlanEntry& entry : entries) {
      if (entry.m_min <= m && m <= entry.m_max) return &entry;
    }
    return nullptr;
  }
  bool operator==(const Plan&) const = default;
};

}  // namespace hummingd
