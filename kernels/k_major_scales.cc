#include "kernels/k_major_scales.h"

#include <cstring>

namespace hummingd {

KMajorScaleSource KMajorScaleSourceOf(const QuantSpec& spec) {
  if (spec.zero_point != ZeroPointKind::kNone) return KMajorScaleSource::kNone;
  switch (spec.granularity) {
    case ScaleGranularity::kGroup:
      return KMajorScaleSource::kCopy;
    case ScaleGranularity::kChannel:
      return KMajorScaleSource::kCheckpoint;
    case ScaleGranularity::kBlock:
    case ScaleGranularity::kTensor:
      return KMajorScaleSource::kNone;
  }
  return KMajorScaleSource::kNone;
}

std::vector<unsigned char> TransposeScalesToKMajor(
    const unsigned char* row_major, int64_t rows, int64_t columns,
    int element_bytes) {
  const size_t element = static_cast<size_t>(element_bytes);
  std::vector<unsigned char> k_major(static_cast<size_t>(rows * columns) *
                                     element);
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t col = 0; col < columns; ++col) {
      std::memcpy(
          &k_major[static_cast<size_t>(col * rows + row) * element],
          &row_major[static_cast<size_t>(row * columns + col) * element],
          element);
    }
  }
  return k_major;
}

}  // namespace hummingd
