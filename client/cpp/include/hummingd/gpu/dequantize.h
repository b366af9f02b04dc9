#pragma once

// Dequantize: quantized weights -> dense (N, K) fp16/bf16 matrix on the GPU,
// with a dequant-family kernel set (kernels/reference/dequant_reference.h
// defines the buffer layouts and the exact result).

#include <cuda.h>

#include "absl/status/status.h"
#include "hummingd/gpu/loaded_kernel_set.h"

namespace hummingd::gpu {

// Device pointers, laid out as in kernels/reference/dequant_reference.h.
struct DequantBuffers {
  CUdeviceptr weights = 0;          // 16-byte aligned
  CUdeviceptr scales = 0;           // aligned to the scale dtype
  CUdeviceptr zero_points = 0;      // required iff the spec has zero points
  CUdeviceptr secondary_scale = 0;  // fp32; required iff the spec has one
  CUdeviceptr output = 0;           // 16-byte aligned
};

// Enqueues one dequantize of the set's layer on `stream` (0 = the context's
// legacy default stream). Allocates nothing and never synchronizes, so it
// can be captured into a CUDA graph. INVALID_ARGUMENT naming the family for
// a set that is not a dequant one (CheckKernelSetFamily), naming the buffer for
// a missing pointer the spec needs or a misaligned one; the launch's own
// driver error otherwise (kernel faults surface at the next synchronize).
absl::Status Dequantize(const LoadedKernelSet& set,
                        const DequantBuffers& buffers, CUstream stream);

}  // namespace hummingd::gpu
