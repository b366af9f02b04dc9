#pragma once

// The two ceilings of KERNELS.md's roofline, max(bytes / copy bandwidth,
// 2·M·N·K / dense fp16 tensor rate), for the GPU a bench runs on. KERNELS.md
// states them for an H200; the device tool lends H100s first (same SMs, about
// 0.7× the memory bandwidth), so every table says which GPU it ran on and which
// ceilings its targets came from. Host-only, so that a unit test covers the
// choice on any machine.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hummingd::bench {

// A GPU's ceilings measured once and committed, so that a case's target does
// not move with one run's measurement noise between the tables of that GPU.
struct CommittedCeilings {
  absl::string_view gpu_name;  // as the driver names it (cuDeviceGetName)
  int sm = 0;                  // compute capability × 10
  double copy_tbps = 0;        // device-to-device copy, bytes read + written
  double tensor_tflops = 0;    // dense fp16 GEMM, 8192³
  absl::string_view measured;  // where the numbers come from
};

// The committed entry for a GPU by its driver name; nullptr for a GPU that has
// none yet.
const CommittedCeilings* FindCommittedCeilings(absl::string_view gpu_name);

// What a run knows about its GPU's ceilings.
struct CeilingEvidence {
  std::string gpu_name;
  int sm = 0;
  double flag_copy_tbps = 0;                 // > 0: given on the command line
  double flag_tensor_tflops = 0;             // > 0: given on the command line
  std::optional<double> measured_copy_tbps;  // this run's copy
  std::optional<double> measured_tensor_tflops;  // this run's cuBLAS GEMM
};

struct Ceiling {
  double value = 0;
  std::string source;  // where the value came from, in words
};

struct GpuCeilings {
  Ceiling copy_tbps;
  Ceiling tensor_tflops;
};

// Per ceiling, the first that exists: the flag; the GPU's committed value;
// this run's measurement; and, for the tensor rate only, the committed rate
// of a GPU of the same compute capability (the H100 and the H200 are one
// chip with different memory: their tensor rates are one, H200.md), named
// as such. FAILED_PRECONDITION, naming the GPU and what is missing, when a
// ceiling has none of these; INVALID_ARGUMENT for a negative flag.
absl::StatusOr<GpuCeilings> ChooseCeilings(const CeilingEvidence& evidence);

// The line a table carries under it: the GPU, both ceilings with their
// sources, and what this run measured (whichever ceilings were taken).
std::string DescribeCeilings(const CeilingEvidence& evidence,
                             const GpuCeilings& ceilings);

}  // namespace hummingd::bench
