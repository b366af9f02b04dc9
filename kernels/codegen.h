#pragma once

// Codegen: the tiny instantiation stub for one kernel config. The stub only
// includes a skeleton header and instantiates it from closed enums and
// integers; no client text ever reaches the compiler.

#include <string>

#include "absl/status/statusor.h"
#include "kernels/plan.h"

namespace hummingd {

// Bumped whenever the stub generator changes what it writes; part of the
// codegen hash and so of every artifact key.
// 2: a wgmma tile's launch bounds follow WgmmaBlocksPerSm's four-per-SM
// rule and the blocks=N option, so one tile text can yield a new stub.
// 3: a wgmma tile whose blocks per SM are not two names them as WgmmaTile's
// tenth argument (with every argument before it).
inline constexpr int kStubGeneratorVersion = 3;

struct KernelSource {
  std::string source;  // CUDA C++ text
  std::string entry;   // extern "C" symbol of the __global__ function
  std::string name;    // file name NVRTC reports in its log
};

absl::StatusOr<KernelSource> GenerateStub(const KernelRequest& request,
                                          const KernelConfig& config);

}  // namespace hummingd
