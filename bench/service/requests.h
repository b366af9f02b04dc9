#pragma once

// The kernels the bench asks for: a Llama-3-8B-style set of dequant layers
// plus FP8 and MXFP4 specs, on a fixed GPU profile (so results do not depend
// on the machine the bench runs on).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hummingd/v1/kernel_service.pb.h"

namespace hummingd::bench {

struct BenchCase {
  std::string label;  // e.g. "w4a16 qkv"
  v1::KernelFamily family = v1::KERNEL_FAMILY_DEQUANT;
  std::string spec_text;
  int64_t n = 0;
  int64_t k = 0;
};

struct GpuProfile {
  std::string arch = "sm_90a";
  int sm_count = 132;
  int max_shared_memory_per_block_optin = 232448;
  std::string device_name = "NVIDIA H200";
};

std::vector<BenchCase> DefaultBenchCases();

// "LABEL:FAMILY:SPEC:NxK" with FAMILY dequant or gemm (no field may contain
// ':'), e.g. "fp8:dequant:weight=e4m3,group=channel,scale=fp32:4096x4096".
absl::StatusOr<BenchCase> ParseBenchCase(const std::string& text);

v1::GetKernelsRequest MakeGetKernelsRequest(const BenchCase& bench_case,
                                            const GpuProfile& gpu);

}  // namespace hummingd::bench
