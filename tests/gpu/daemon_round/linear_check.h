#pragma once

// One GEMM layer of the daemon round, end to end through the SDK:
// daemon-served kernel set -> QuantizedLinear (GPU repack of checkpoint
// weights) -> Forward for several M -> every element against an fp64
// reference of the dequantized weights times the activations.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "hummingd/kernel_client.h"

namespace hummingd::gpu::testing {

struct LinearCheckResult {
  double worst_relative_error = 0;  // ‖y − ref‖ / ‖ref‖, worst over the Ms
  double bound = 0;                 // 1e-3 (fp16 acts) / 8e-3 (bf16 acts)
  int64_t non_finite = 0;           // NaN/inf left in any output
  std::vector<std::string> artifact_keys;
};

absl::StatusOr<LinearCheckResult> CheckQuantizedLinear(
    client::KernelClient& kernel_client, ArtifactCache& artifacts,
    const std::string& spec_text, int64_t n, int64_t k,
    const std::vector<int64_t>& ms, const std::string& arch, uint64_t seed);

}  // namespace hummingd::gpu::testing
