#include "hummingd/gpu/quantized_linear.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "gemm/wna16_args.cuh"
#include "kernels/k_major_scales.h"

namespace hummingd::gpu {
namespace {

constexpr CUdeviceptr kVectorAlignment = 16;

absl::Status CheckPointer(absl::string_view name, CUdeviceptr pointer,
                          bool required, CUdeviceptr alignment) {
  if (pointer == 0) {
    if (!required) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("quantized_linear.", name, ": must not be null"));
  }
  if (pointer % alignment != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("quantized_linear.", name, ": must be ", alignment,
                     "-byte aligned (got 0x", absl::Hex(pointer), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckWeights(const QuantSpec& spec,
                          const CheckpointWeights& weights) {
  RETURN_IF_ERROR(
      CheckPointer("weights", weights.weights, true, kVectorAlignment));
  // The Hopper decode kernels copy scales and zero points in 16-byte
  // windows (kernels/device/memory/wgmma_tiles.cuh).
  RETURN_IF_ERROR(
      CheckPointer("scales", weights.scales, true, kVectorAlignment));
  RETURN_IF_ERROR(CheckPointer("zero_points", weights.zero_points,
                               spec.zero_point != ZeroPointKind::kNone,
                               kVectorAlignment));
  RETURN_IF_ERROR(CheckPointer("secondary_scale", weights.secondary_scale,
                               spec.secondary_scale != SecondaryScale::kNone,
                               sizeof(float)));
  return CheckPointer(
      "bias", weights.bias, spec.has_bias,
      static_cast<CUdeviceptr>(DataTypeBytes(spec.output_type)));
}

// The largest split-K buffers any kernel needs for up to `max_m` tokens.
struct SplitKBytes {
  int64_t workspace = 0;
  int64_t counters = 0;
};

SplitKBytes SplitKBuffers(const LoadedKernelSet& set, int64_t max_m) {
  SplitKBytes bytes;
  for (const LoadedKernel& kernel : set.kernels()) {
    if (kernel.m_min > max_m) break;
    const int64_t m = std::min(max_m, kernel.m_max);
    bytes.workspace = std::max(bytes.workspace, kernel.WorkspaceBytes(m));
    bytes.counters = std::max(bytes.counters, kernel.CounterBytes(m));
  }
  return bytes;
}

// The scales of a group-scaled layer without zero points as [column][row]
// (the checkpoint's [row][column] transposed, TransposeScalesToKMajor), for
// the decode tiles built with k-major scales; 0 for other specs. Done on the
// host once per layer whose kernel set has such a tile: the tensor is
// N * K / group elements (1 MB for 8192 x 8192 at group 128). A snapshot:
// scales updated in place later do not reach it.
absl::StatusOr<CUdeviceptr> PrepareKMajorScales(const CudaDriverApi& driver,
                                                const QuantSpec& spec,
                                                int64_t n, int64_t k,
                                                CUdeviceptr scales,
                                                CUstream stream) {
  if (KMajorScaleSourceOf(spec) != KMajorScaleSource::kCopy) {
    return CUdeviceptr{0};
  }
  if (k % spec.group_size != 0) {  // ValidateShape refuses such layers
    return absl::InvalidArgumentError(
        absl::StrCat("shape.k: ", k, " is not a multiple of the group size ",
                     spec.group_size));
  }
  // The checkpoint tensors are ready on `stream` (the repack reads them
  // there too).
  RETURN_IF_ERROR(
      CudaCheck(driver.cuStreamSynchronize(stream), "cuStreamSynchronize"));
  const int64_t columns = k / spec.group_size;
  const int element = DataTypeBytes(spec.scale_type);
  const size_t bytes = static_cast<size_t>(n * columns * element);
  std::vector<unsigned char> row_major(bytes);
  RETURN_IF_ERROR(
      CudaCheck(driver.cuMemcpyDtoH(row_major.data(), scales, bytes),
                "cuMemcpyDtoH(scales)"));
  const std::vector<unsigned char> k_major =
      TransposeScalesToKMajor(row_major.data(), n, columns, element);
  CUdeviceptr copy = 0;
  RETURN_IF_ERROR(
      CudaCheck(driver.cuMemAlloc(&copy, bytes), "cuMemAlloc(k-major scales)"));
  // On the layer's stream, which every Forward runs on; waited for so that
  // the host buffer outlives the pageable copy (a context-wide sync would
  // also wait for other streams' work and fail while another thread
  // captures a graph).
  absl::Status uploaded =
      CudaCheck(driver.cuMemcpyHtoDAsync(copy, k_major.data(), bytes, stream),
                "cuMemcpyHtoDAsync(scales)");
  if (uploaded.ok()) {
    uploaded =
        CudaCheck(driver.cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  if (!uploaded.ok()) {
    driver.cuMemFree(copy);
    return uploaded;
  }
  return copy;
}

// The context a layer of `set` lives in: the calling thread's current one,
// else the set's device's primary context, retained for the layer (its
// destructor releases it).
struct LayerContext {
  CUcontext context = nullptr;
  bool retained_primary = false;
};

absl::StatusOr<LayerContext> ChooseLayerContext(const LoadedKernelSet& set) {
  const CudaDriverApi& driver = set.driver();
  LayerContext chosen;
  RETURN_IF_ERROR(
      CudaCheck(driver.cuCtxGetCurrent(&chosen.context), "cuCtxGetCurrent"));
  if (chosen.context == nullptr) {
    RETURN_IF_ERROR(CudaCheck(
        driver.cuDevicePrimaryCtxRetain(&chosen.context, set.device().device),
        "cuDevicePrimaryCtxRetain"));
    chosen.retained_primary = true;
    return chosen;
  }
  CUdevice device = 0;
  RETURN_IF_ERROR(CudaCheck(driver.cuCtxGetDevice(&device), "cuCtxGetDevice"));
  if (device != set.device().device) {
    return absl::FailedPreconditionError(absl::StrCat(
        "quantized_linear.set: loaded for device ", set.device().ordinal,
        ", but the calling thread's current context is on device ",
        static_cast<int>(device),
        "; load the kernel set with this device current"));
  }
  return chosen;
}

// Makes a layer's context current on the calling thread for the scope's
// lifetime, unless it already is (pushed onto the thread's context stack,
// so whatever the caller had current is current again afterwards).
class ContextScope {
 public:
  ContextScope(const CudaDriverApi& driver, CUcontext context)
      : driver_(driver), pushed_(Push(driver, context)) {}
  ~ContextScope() {
    if (!pushed_.ok() || !*pushed_) return;
    CUcontext popped = nullptr;
    const absl::Status status =
        CudaCheck(driver_.cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
    if (!status.ok()) {
      log::Error(absl::StrCat("event=quantized_linear_context error=\"",
                              status.message(), "\""));
    }
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

  absl::Status status() const { return pushed_.status(); }

 private:
  // Whether it pushed: the common case (the caller already has the layer's
  // context current) costs one thread-local read, not a push and a pop.
  static absl::StatusOr<bool> Push(const CudaDriverApi& driver,
                                   CUcontext context) {
    CUcontext current = nullptr;
    RETURN_IF_ERROR(
        CudaCheck(driver.cuCtxGetCurrent(&current), "cuCtxGetCurrent"));
    if (current == context) return false;
    RETURN_IF_ERROR(
        CudaCheck(driver.cuCtxPushCurrent(context), "cuCtxPushCurrent"));
    return true;
  }

  const CudaDriverApi& driver_;
  const absl::StatusOr<bool> pushed_;
};

// Whether launching `kernel` on `stream` needs the layer's context current.
// A CUkernel (context-independent artifact) runs in its stream's context:
// for a stream the caller created, the current context plays no part. Only
// the NULL, legacy and per-thread default streams mean "the current
// context's", and a module function belongs to the context it was loaded
// in.
bool LaunchNeedsContext(const LoadedKernel& kernel, CUstream stream) {
  if (!kernel.artifact->context_independent) return true;
  return stream == nullptr || stream == CU_STREAM_LEGACY ||
         stream == CU_STREAM_PER_THREAD;
}

// Frees one of a layer's buffers; a destructor can only log a failure.
void FreeLogged(const CudaDriverApi& driver, CUdeviceptr pointer,
                absl::string_view what) {
  if (pointer == 0) return;
  const absl::Status status = CudaCheck(driver.cuMemFree(pointer),
                                        absl::StrCat("cuMemFree(", what, ")"));
  if (!status.ok()) {
    log::Error(absl::StrCat("event=quantized_linear_free error=\"",
                            status.message(), "\""));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<QuantizedLinear>> QuantizedLinear::Create(
    std::shared_ptr<const LoadedKernelSet> set,
    const CheckpointWeights& weights, int64_t max_m, CUstream stream) {
  if (set == nullptr) {
    return absl::InvalidArgumentError("quantized_linear.set: must not be null");
  }
  // Before anything reads the ranges: a dequant set's kernels take
  // DequantArgs, and it has no repack kernel.
  RETURN_IF_ERROR(CheckKernelSetFamily(set->family(), v1::KERNEL_FAMILY_GEMM,
                                       "a layer (QuantizedLinear)"));
  const QuantSpec& spec = set->spec();
  if (set->n() <= 0 || set->k() <= 0) {
    return absl::InvalidArgumentError(
        "quantized_linear.set: the kernel set does not state its N and K");
  }
  if (max_m < 1 || max_m > set->kernels().back().m_max) {
    std::string message =
        absl::StrCat("quantized_linear.max_m: must be in [1, ",
                     set->kernels().back().m_max, "] (got ", max_m, ")");
    const std::string note =
        MaxMNote(set->served_max_m(), set->kernels().back().m_max, max_m);
    if (!note.empty()) absl::StrAppend(&message, ": ", note);
    return absl::InvalidArgumentError(message);
  }
  ASSIGN_OR_RETURN(const LoadedKernel* repack, set->Prepare("repack"));
  RETURN_IF_ERROR(CheckWeights(spec, weights));

  const CudaDriverApi& driver = set->driver();
  std::unique_ptr<QuantizedLinear> layer(new QuantizedLinear());
  layer->set_ = set;
  ASSIGN_OR_RETURN(const LayerContext context, ChooseLayerContext(*set));
  // Owned by the layer at once: a failure below releases it in the
  // destructor.
  layer->context_ = context.context;
  layer->retained_primary_context_ = context.retained_primary;
  // The allocations, the repack and (if Create fails) the destructor's
  // frees all run in the layer's context, whatever the caller has current.
  ContextScope scope(driver, context.context);
  RETURN_IF_ERROR(scope.status());
  layer->weights_ = weights;
  layer->max_m_ = max_m;
  const int64_t fragment_bytes = set->n() * set->k() * spec.weight.bits / 8;
  RETURN_IF_ERROR(
      CudaCheck(driver.cuMemAlloc(&layer->fragments_,
                                  static_cast<size_t>(fragment_bytes)),
                "cuMemAlloc(repacked weights)"));
  const SplitKBytes split_k = SplitKBuffers(*set, max_m);
  if (split_k.workspace > 0) {
    RETURN_IF_ERROR(
        CudaCheck(driver.cuMemAlloc(&layer->workspace_,
                                    static_cast<size_t>(split_k.workspace)),
                  "cuMemAlloc(split-K workspace)"));
  }
  if (split_k.counters > 0) {
    RETURN_IF_ERROR(
        CudaCheck(driver.cuMemAlloc(&layer->counters_,
                                    static_cast<size_t>(split_k.counters)),
                  "cuMemAlloc(split-K counters)"));
    // Every launch leaves the counters zeroed; they start so. On `stream`,
    // like the repack, so that Forward calls on it see zeros (a plain
    // cuMemsetD8 runs on the legacy stream, which a non-blocking stream
    // does not wait for).
    RETURN_IF_ERROR(CudaCheck(
        driver.cuMemsetD8Async(layer->counters_, 0,
                               static_cast<size_t>(split_k.counters), stream),
        "cuMemsetD8Async(split-K counters)"));
  }

  // The transposed copy (as large as the scales) only where a kernel that
  // serves some M <= max_m reads it: Forward refuses larger M, and since
  // planner v61 the 16- / 32-token tiles of uint4 groups of 128 read it on
  // the large layers, so a layer built for M <= 8 would otherwise carry it
  // for nothing.
  const bool needs_k_major =
      std::any_of(set->kernels().begin(), set->kernels().end(),
                  [max_m](const LoadedKernel& kernel) {
                    return kernel.k_major_scales && kernel.m_min <= max_m;
                  });
  if (needs_k_major) {
    ASSIGN_OR_RETURN(layer->scales_k_major_,
                     PrepareKMajorScales(driver, spec, set->n(), set->k(),
                                         weights.scales, stream));
  }

  RepackArgs args;
  args.checkpoint = reinterpret_cast<const device::u32*>(weights.weights);
  args.fragments = reinterpret_cast<device::u32*>(layer->fragments_);
  RETURN_IF_ERROR(LaunchKernel(*set, *repack, /*m=*/1, &args, stream));
  return layer;
}

QuantizedLinear::~QuantizedLinear() {
  if (set_ == nullptr || context_ == nullptr) return;
  const CudaDriverApi& driver = set_->driver();
  {
    // The buffers belong to the layer's context, not necessarily the
    // destroying thread's.
    ContextScope scope(driver, context_);
    if (scope.status().ok()) {
      // Freeing synchronizes with pending work on these buffers, so a layer
      // destroyed right after a Forward is still safe.
      FreeLogged(driver, fragments_, "repacked weights");
      FreeLogged(driver, workspace_, "split-K workspace");
      FreeLogged(driver, counters_, "split-K counters");
      FreeLogged(driver, scales_k_major_, "k-major scales");
    } else {
      // Freeing in whatever context is current instead could release
      // another context's allocations at these addresses: leak them.
      log::Error(absl::StrCat("event=quantized_linear_free leaked=1 error=\"",
                              scope.status().message(), "\""));
    }
  }
  // After the pop: the last release of a primary context destroys it.
  if (retained_primary_context_) {
    const absl::Status released =
        CudaCheck(driver.cuDevicePrimaryCtxRelease(set_->device().device),
                  "cuDevicePrimaryCtxRelease");
    if (!released.ok()) {
      log::Error(absl::StrCat("event=quantized_linear_context error=\"",
                              released.message(), "\""));
    }
  }
}

absl::Status QuantizedLinear::Forward(CUdeviceptr x, CUdeviceptr y, int64_t m,
                                      CUstream stream) const {
  if (m < 1 || m > max_m_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "quantized_linear.m: must be in [1, ", max_m_, "] (got ", m, ")"));
  }
  RETURN_IF_ERROR(CheckPointer("x", x, true, kVectorAlignment));
  RETURN_IF_ERROR(CheckPointer("y", y, true, kVectorAlignment));
  ASSIGN_OR_RETURN(const LoadedKernel* kernel, set_->ForM(m));
  // The hot path: at most a context push and pop, no synchronization
  // (still capturable), and none of it for an explicit stream.
  std::optional<ContextScope> scope;
  if (LaunchNeedsContext(*kernel, stream)) {
    scope.emplace(set_->driver(), context_);
    RETURN_IF_ERROR(scope->status());
  }
  const QuantSpec& spec = set_->spec();
  GemmArgs args;
  args.x = reinterpret_cast<const void*>(x);
  args.weights = reinterpret_cast<const device::u32*>(fragments_);
  args.zero_points = spec.zero_point == ZeroPointKind::kNone
                         ? nullptr
                         : reinterpret_cast<const void*>(weights_.zero_points);
  args.secondary_scale =
      spec.secondary_scale == SecondaryScale::kNone
          ? nullptr
          : reinterpret_cast<const float*>(weights_.secondary_scale);
  args.bias =
      spec.has_bias ? reinterpret_cast<const void*>(weights_.bias) : nullptr;
  args.y = reinterpret_cast<void*>(y);
  const bool split_k = kernel->grid_z > 1;
  args.workspace = split_k ? reinterpret_cast<void*>(workspace_) : nullptr;
  args.split_counters =
      split_k ? reinterpret_cast<device::u32*>(counters_) : nullptr;
  args.m = m;
  ASSIGN_OR_RETURN(
      args.scales,
      GemmScalesArgument(spec, *kernel, weights_.scales, scales_k_major_));
  return LaunchKernel(*set_, *kernel, m, &args, stream);
}

absl::StatusOr<const void*> GemmScalesArgument(const QuantSpec& spec,
                                               const LoadedKernel& kernel,
                                               CUdeviceptr scales,
                                               CUdeviceptr k_major_copy) {
  if (!kernel.k_major_scales) return reinterpret_cast<const void*>(scales);
  CUdeviceptr pointer = 0;
  switch (KMajorScaleSourceOf(spec)) {
    case KMajorScaleSource::kCheckpoint:
      pointer = scales;
      break;
    case KMajorScaleSource::kCopy:
      pointer = k_major_copy;
      break;
    case KMajorScaleSource::kNone:
      break;
  }
  if (pointer == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "scales: the kernel for M ", kernel.m_min, "-", kernel.m_max,
        " reads k-major scales (layout=kmajor), which this layer does not "
        "have (group scales without zero points need the layer's transposed "
        "copy; channel-wise scales are their own)"));
  }
  return reinterpret_cast<const void*>(pointer);
}

}  // namespace hummingd::gpu
