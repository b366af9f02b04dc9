#include "hummingd/gpu/dequantize.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gemm/dequant_args.cuh"

namespace hummingd::gpu {
namespace {

// The kernel moves weights and outputs with 16-byte vector accesses.
constexpr CUdeviceptr kVectorAlignment = 16;

absl::Status CheckBuffer(const char* name, CUdeviceptr pointer, bool required,
                         CUdeviceptr alignment) {
  if (pointer == 0) {
    if (!required) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("dequant.", name, ": must not be null for this spec"));
  }
  if (pointer % alignment != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("dequant.", name, ": must be ", alignment,
                     "-byte aligned (got 0x", absl::Hex(pointer), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckBuffers(const QuantSpec& spec,
                          const DequantBuffers& buffers) {
  absl::Status status =
      CheckBuffer("weights", buffers.weights, true, kVectorAlignment);
  if (status.ok()) {
    status = CheckBuffer("output", buffers.output, true, kVectorAlignment);
  }
  if (status.ok()) {
    status =
        CheckBuffer("scales", buffers.scales, true,
                    static_cast<CUdeviceptr>(DataTypeBytes(spec.scale_type)));
  }
  if (status.ok()) {
    const bool needed = spec.zero_point != ZeroPointKind::kNone;
    const CUdeviceptr bytes =
        spec.zero_point == ZeroPointKind::kFloat
            ? static_cast<CUdeviceptr>(DataTypeBytes(spec.activation_type))
            : 1;
    status = CheckBuffer("zero_points", buffers.zero_points, needed, bytes);
  }
  if (status.ok()) {
    status = CheckBuffer("secondary_scale", buffers.secondary_scale,
                         spec.secondary_scale != SecondaryScale::kNone,
                         sizeof(float));
  }
  return status;
}

}  // namespace

absl::Status Dequantize(const LoadedKernelSet& set,
                        const DequantBuffers& buffers, CUstream stream) {
  RETURN_IF_ERROR(CheckKernelSetFamily(set.family(), v1::KERNEL_FAMILY_DEQUANT,
                                       "dequantize"));
  const absl::Status valid = CheckBuffers(set.spec(), buffers);
  if (!valid.ok()) return valid;

  const QuantSpec& spec = set.spec();
  DequantArgs args;
  args.weights = reinterpret_cast<const device::u32*>(buffers.weights);
  args.scales = reinterpret_cast<const void*>(buffers.scales);
  args.zero_points = spec.zero_point == ZeroPointKind::kNone
                         ? nullptr
                         : reinterpret_cast<const void*>(buffers.zero_points);
  args.secondary_scale =
      spec.secondary_scale == SecondaryScale::kNone
          ? nullptr
          : reinterpret_cast<const float*>(buffers.secondary_scale);
  args.output = reinterpret_cast<void*>(buffers.output);
  // A dequant grid covers the (N, K) matrix and ignores M, so every range
  // launches the same way; the first one stands for all.
  return LaunchKernel(set, set.kernels().front(), /*m=*/1, &args, stream);
}

}  // namespace hummingd::gpu
