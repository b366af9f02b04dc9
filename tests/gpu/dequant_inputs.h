#pragma once

// One dequant layer on the device: random inputs (MakeRandomDequantInputs),
// their device copies, a poisoned output, and the exact expected bits.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hummingd/gpu/dequantize.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"
#include "tests/gpu/gpu_test_support.h"

namespace hummingd::gpu::testing {

class DeviceDequantLayer {
 public:
  // Uploads fresh inputs for (spec, n, k) drawn from `seed`, computes the
  // expected output bits on the CPU, and poisons the output with 0xFF bytes
  // (NaN in fp16 and bf16).
  absl::Status Init(const std::string& spec_text, int64_t n, int64_t k,
                    uint64_t seed);

  absl::Status PoisonOutput() { return output_.Fill(0xFF); }
  absl::StatusOr<std::vector<uint16_t>> DownloadOutput() const;

  // Elements of `got` that differ from the expectation, with the first few
  // described.
  int64_t CountMismatches(const std::vector<uint16_t>& got,
                          std::string* first_few) const;

  DequantBuffers buffers() const;
  const std::vector<uint16_t>& expected() const { return expected_; }
  int64_t n() const { return shape_.n; }
  int64_t k() const { return shape_.k; }

 private:
  QuantSpec spec_;
  LayerShape shape_;
  std::vector<uint16_t> expected_;
  DeviceBuffer weights_;
  DeviceBuffer scales_;
  DeviceBuffer zero_points_;
  DeviceBuffer secondary_;
  DeviceBuffer output_;
};

}  // namespace hummingd::gpu::testing
