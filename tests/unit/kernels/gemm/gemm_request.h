#pragma once

// A GEMM KernelRequest for planner tests: the canonical spec from its text,
// the layer N x K, a GPU arch, (0 = the planner's default) SM count and the
// launch ABI (default: the current clients').

#include <cstdint>
#include <utility>

#include "kernels/launch_abi.h"
#include "kernels/plan.h"
#include "kernels/quant_spec.h"

namespace hummingd::testing {

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

// Issue 5's layers (N x K) and the four decode specs of its table of
// record (bench/results/gemm-decode-*.md).
inline constexpr std::pair<int64_t, int64_t> kIssue5Layers[] = {
    {8192, 8192}, {28672, 8192}, {8192, 28672},
    {4096, 4096}, {6144, 4096},  {4096, 14336}};
inline constexpr const char* kIssue5TableSpecs[] = {
    "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
    "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16",
    "weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
    "weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16"};

}  // namespace hummingd::testing
