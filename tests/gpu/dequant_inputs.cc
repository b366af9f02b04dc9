#include "tests/gpu/dequant_inputs.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "kernels/reference/dequant_reference.h"

namespace hummingd::gpu::testing {

absl::Status DeviceDequantLayer::Init(const std::string& spec_text, int64_t n,
                                      int64_t k, uint64_t seed) {
  ASSIGN_OR_RETURN(spec_, ParseSpecText(spec_text));
  shape_.n = n;
  shape_.k = k;
  RETURN_IF_ERROR(DequantBufferLayout(spec_, shape_).status());
  const DequantInputs inputs = MakeRandomDequantInputs(spec_, shape_, seed);
  ASSIGN_OR_RETURN(std::vector<float> reference,
                   ReferenceDequantize(spec_, shape_, inputs));
  ASSIGN_OR_RETURN(expected_, RoundToOutputBits(reference, spec_.output_type));

  RETURN_IF_ERROR(weights_.Allocate(inputs.weights.size() * sizeof(uint32_t),
                                    inputs.weights.data()));
  RETURN_IF_ERROR(scales_.Allocate(inputs.scales.size(), inputs.scales.data()));
  RETURN_IF_ERROR(zero_points_.Allocate(inputs.zero_points.size(),
                                        inputs.zero_points.data()));
  RETURN_IF_ERROR(
      secondary_.Allocate(inputs.secondary_scales.size() * sizeof(float),
                          inputs.secondary_scales.data()));
  RETURN_IF_ERROR(output_.Allocate(expected_.size() * sizeof(uint16_t)));
  return PoisonOutput();
}

absl::StatusOr<std::vector<uint16_t>> DeviceDequantLayer::DownloadOutput()
    const {
  ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
  RETURN_IF_ERROR(CudaCheck(api->cuCtxSynchronize(), "cuCtxSynchronize"));
  std::vector<uint16_t> got(expected_.size());
  RETURN_IF_ERROR(output_.Download(got.data(), got.size() * sizeof(uint16_t)));
  return got;
}

int64_t DeviceDequantLayer::CountMismatches(const std::vector<uint16_t>& got,
                                            std::string* first_few) const {
  int64_t mismatches = 0;
  for (size_t i = 0; i < expected_.size(); ++i) {
    if (got[i] == expected_[i]) continue;
    if (++mismatches <= 8) {
      absl::StrAppend(
          first_few,
          absl::StrFormat("\n  (row %d, col %d): got 0x%04x, want 0x%04x",
                          static_cast<int64_t>(i) / shape_.k,
                          static_cast<int64_t>(i) % shape_.k, got[i],
                          expected_[i]));
    }
  }
  return mismatches;
}

DequantBuffers DeviceDequantLayer::buffers() const {
  DequantBuffers buffers;
  buffers.weights = weights_.get();
  buffers.scales = scales_.get();
  buffers.zero_points = zero_points_.get();
  buffers.secondary_scale = secondary_.get();
  buffers.output = output_.get();
  return buffers;
}

}  // namespace hummingd::gpu::testing
