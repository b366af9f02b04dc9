#pragma once

// QuantizedLinear: the layer op. Takes a layer's checkpoint-style quantized
// tensors on the device, repacks the weights once (on the GPU, with the
// KernelSet's "repack" prepare kernel) into the GEMM kernels' fragment
// order, and then computes y = x · Wᵀ (+ bias) for any M by launching the
// kernel of the M range that holds it.

#include <cuda.h>

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "hummingd/gpu/loaded_kernel_set.h"

namespace hummingd::gpu {

// Device buffers in the checkpoint layout of kernels/reference/
// dequant_reference.h (the same tensors Dequantize takes).
struct CheckpointWeights {
  // Weights, scales and zero points 16-byte aligned.
  CUdeviceptr weights = 0;          // (N, K*bits/32) uint32 rows
  CUdeviceptr scales = 0;           // scale dtype, granularity layout
  CUdeviceptr zero_points = 0;      // when the spec has zero points
  CUdeviceptr secondary_scale = 0;  // fp32, when the spec has one
  CUdeviceptr bias = 0;             // (N) output dtype, when the spec has bias
};

class QuantizedLinear {
 public:
  // `set` must be a GEMM kernel set (with its "repack" prepare kernel);
  // INVALID_ARGUMENT naming the family otherwise (CheckKernelSetFamily).
  // Allocates the repacked weights and the split-K buffers for up to
  // `max_m` tokens, and enqueues the zeroing of the split-K counters and the
  // repack on `stream`; Forward calls on the same stream run after both.
  // `weights.weights` may be freed once the stream has passed the repack;
  // scales, zero points, secondary scale and bias are read by every Forward and
  // must outlive the layer. A set with k-major tiles (layout=kmajor) of a
  // group-scaled spec also gets a transposed snapshot of the scales, made on
  // the host after waiting for `stream`.
  // The layer lives in one CUDA context: the calling thread's current one
  // (FAILED_PRECONDITION when it is on another device than the set's),
  // which the caller keeps alive until the layer is destroyed (its buffers
  // are freed there), or the set's device's primary context when the
  // thread has none, which the layer retains until its destructor. Create,
  // Forward and the destructor make it current for their own duration
  // where it is not already (Forward only where the launch reads it: not
  // for a CUDA 12+ kernel on an explicit stream, which runs in the
  // stream's context), so any thread may call them.
  static absl::StatusOr<std::unique_ptr<QuantizedLinear>> Create(
      std::shared_ptr<const LoadedKernelSet> set,
      const CheckpointWeights& weights, int64_t max_m, CUstream stream);
  ~QuantizedLinear();

  QuantizedLinear(const QuantizedLinear&) = delete;
  QuantizedLinear& operator=(const QuantizedLinear&) = delete;

  // y (M, N) = x (M, K) · Wᵀ (+ bias), activation/output dtypes of the spec,
  // row-major, 16-byte aligned; 1 <= m <= max_m. Allocates nothing and never
  // synchronizes (CUDA-graph capturable). Calls on one layer must be ordered
  // on one stream: they share the split-K workspace.
  absl::Status Forward(CUdeviceptr x, CUdeviceptr y, int64_t m,
                       CUstream stream) const;

  int64_t n() const { return set_->n(); }
  int64_t k() const { return set_->k(); }
  int64_t max_m() const { return max_m_; }
  CUdeviceptr repacked_weights() const { return fragments_; }

 private:
  QuantizedLinear() = default;

  std::shared_ptr<const LoadedKernelSet> set_;
  CUcontext context_ = nullptr;  // where the buffers live, launches run
  // context_ is the set's device's primary context, retained by Create.
  bool retained_primary_context_ = false;
  CheckpointWeights weights_;
  int64_t max_m_ = 0;
  CUdeviceptr fragments_ = 0;  // owned
  CUdeviceptr workspace_ = 0;  // owned; null without split-K
  CUdeviceptr counters_ = 0;   // owned, zeroed once; null without split-K
  // owned: the scales as [column][row] for tiles built with k-major scales
  // (group scales, no zero points); null for other specs
  CUdeviceptr scales_k_major_ = 0;
};

// GemmArgs::scales for a launch of `kernel` on a layer of `spec` whose
// checkpoint scales are `scales` and whose transposed copy of them is
// `k_major_copy` (0 when it has none; kernels/k_major_scales.h says which
// specs need one): the checkpoint scales, except for a kernel that reads
// k-major scales (layout=kmajor): the copy for group scales, the checkpoint
// tensor for channel-wise ones, FAILED_PRECONDITION when the layer has
// neither. Forward's rule, and any other launcher's (the GPU test suite).
absl::StatusOr<const void*> GemmScalesArgument(const QuantSpec& spec,
                                               const LoadedKernel& kernel,
                                               CUdeviceptr scales,
                                               CUdeviceptr k_major_copy);

}  // namespace hummingd::gpu
