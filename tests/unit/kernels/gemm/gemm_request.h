#pragma once

// A GEMM KernelRequest for planner tests: the canonical spec from its text,
// the layer N x K, a GPU arch, (0 = the planner's default) SM count and the
// launch ABI (default: the current clients').

#include <cstdint>
#include <iterator>
#include <vector>

#include "bench/kernel/decode_cases.h"
#include "gtest/gtest.h"
#include "kernels/gemm_config.h"
#include "kernels/launch_abi.h"
#include "kernels/plan.h"
#include "kernels/quant_spec.h"

namespace hummingd::testing {

// Issue 5's W4A16 specs (uint4 in groups of 128) with fp16 and bf16
// activations.
inline constexpr char kUint4Fp16[] = "weight=uint4,group=128,scale=fp16";
inline constexpr char kUint4Bf16[] =
    "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16";

// The canonical spec of a test's spec text (known to parse).
inline QuantSpec SpecOf(const char* text) {
  return Canonicalize(*ParseSpecText(text));
}

// The tile of a test's tile text (known to parse).
inline GemmTileConfig TileOf(const char* text) {
  return *ParseGemmTileText(text);
}

inline KernelRequest GemmRequest(const char* spec_text, int64_t n, int64_t k,
                                 const char* arch = "sm_90a", int sm_count = 0,
                                 uint32_t launch_abi = kCurrentLaunchAbi) {
  KernelRequest request;
  request.family = KernelFamily::kGemm;
  request.spec = Canonicalize(*ParseSpecText(spec_text));
  request.shape.n = n;
  request.shape.k = k;
  request.gpu = *ParseGpuArch(arch);
  request.gpu.sm_count = sm_count;
  request.launch_abi = launch_abi;
  return request;
}

// The same on an H200 (sm_90a, 132 SMs): the GPU the decode and prefill
// plans were measured on.
inline KernelRequest H200GemmRequest(const char* spec_text, int64_t n,
                                     int64_t k) {
  return GemmRequest(spec_text, n, k, "sm_90a", 132);
}

// A request at an H200's SM count (132) for any arch: the decode plan
// tests hold the SM count and vary the arch.
inline KernelRequest DecodeRequest(const char* spec_text, int64_t n, int64_t k,
                                   const char* arch = "sm_90a") {
  return GemmRequest(spec_text, n, k, arch, 132);
}

// Issue 5's layers (N x K) and the four decode specs of its table of
// record (bench/results/gemm-decode-*.md): the bench's own defaults.
inline constexpr auto& kIssue5Layers = bench::kDecodeLayers;
inline constexpr auto& kIssue5TableSpecs = bench::kDecodeSpecs;

// The table of record's specs and the group sizes the issue also reports.
inline const std::vector<const char*> kIssue5SpecsWithGroupSizes = [] {
  std::vector<const char*> specs(std::begin(kIssue5TableSpecs),
                                 std::end(kIssue5TableSpecs));
  specs.insert(specs.end(), {"weight=uint4,group=32,scale=fp16",
                             "weight=uint4,group=64,scale=fp16",
                             "weight=uint4,group=channel,scale=fp16"});
  return specs;
}();

// The top M of each Hopper decode range. Since planner v40 a range may
// come as two entries, the upper one with early=1
// (gemm_decode_early_test.cc checks the lower).
inline constexpr int64_t kDecodeRangeTops[] = {8, 16, 32, 64};

// The entries serving the tops of the decode ranges, as many as the plan
// has.
inline std::vector<PlanEntry> DecodeRangeTops(const Plan& plan) {
  std::vector<PlanEntry> tops;
  for (const int64_t m : kDecodeRangeTops) {
    if (const PlanEntry* entry = plan.EntryFor(m)) tops.push_back(*entry);
  }
  return tops;
}

// The entry serving the top of decode range `range` (0-3); a test failure
// and an empty entry where none does.
inline PlanEntry DecodeRangeEntry(const Plan& plan, int range) {
  const PlanEntry* entry = plan.EntryFor(kDecodeRangeTops[range]);
  if (entry == nullptr) {
    ADD_FAILURE() << "no plan entry serves M = " << kDecodeRangeTops[range];
    return PlanEntry{};
  }
  return *entry;
}

}  // namespace hummingd::testing
