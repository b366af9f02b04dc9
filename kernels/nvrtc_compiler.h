#pragma once

// NVRTC wrapper: compiles a generated stub against the device headers embedded
// in this binary into a cubin for one arch. Thread-safe (NVRTC programs are
// per call).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/codegen.h"
#include "kernels/gpu_target.h"

namespace hummingd {

struct CompiledKernel {
  std::string cubin;
  std::string entry;
  std::string log;  // compiler log (warnings), may be empty
  double compile_ms = 0;
};

struct ToolchainInfo {
  int nvrtc_major = 0;
  int nvrtc_minor = 0;
  std::string Identity() const;  // "nvrtc-13.0"
};

// NVRTC's version, read once.
const ToolchainInfo& Toolchain();

// The exact option list passed to NVRTC for `gpu` (canonical: fixed order, no
// paths), also recorded in artifact keys.
std::vector<std::string> CanonicalCompileOptions(const GpuTarget& gpu);

// SHA-256 over every embedded device header (path + content, sorted by path)
// and kStubGeneratorVersion: any header change yields a new artifact key.
const std::string& CodegenHash();

// INTERNAL with the compiler log attached on compile failure.
absl::StatusOr<CompiledKernel> CompileKernel(const KernelSource& source,
                                             const GpuTarget& gpu);

}  // namespace hummingd
