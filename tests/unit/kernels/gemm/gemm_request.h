#pragma once

// A GEMM KernelRequest for planner tests: the canonical spec from its text,
// the layer N x K, a GPU arch and (0 = the planner's default) SM count.

#include <cstdint>

#include "kernels/plan.h"
#include "kernels/quant_spec.h"

namespace hummingd::testing {

inline KernelRequest GemmRequest(const char* spec_text, int64_t n, int64_t k,
                                 const char* arch = "sm_90a",
                                 int sm_count = 0) {
  KernelRequest request;
  request.family = KernelFamily::kGemm;
  request.spec = Canonicalize(*ParseSpecText(spec_text));
  request.shape.n = n;
  request.shape.k = k;
  request.gpu = *ParseGpuArch(arch);
  request.gpu.sm_count = sm_count;
  return request;
}

}  // namespace hummingd::testing
