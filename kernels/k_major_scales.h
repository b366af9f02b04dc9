#pragma once

// The k-major scale layout of the wgmma decode tiles built with
// layout=kmajor (kernels/gemm_config.h): the scales as [column][row], the
// checkpoint's [row][column] tensor (kernels/reference/dequant_reference.h)
// transposed, so that a block's chunk of scales is one contiguous run of
// rows per column. Which specs can have it, and the host transpose that
// every layer holder (QuantizedLinear, the GPU test suite) uses.

#include <cstdint>
#include <vector>

#include "kernels/quant_spec.h"

namespace hummingd {

// Where a layout=kmajor tile finds its k-major scales for a spec.
enum class KMajorScaleSource : uint8_t {
  // Such tiles cannot read this spec (zero points, 2-D block or tensor
  // scales: the kernel refuses them at compile time).
  kNone = 0,
  // Channel-wise scales are one column: the checkpoint tensor is already
  // k-major.
  kCheckpoint = 1,
  // Group scales: the layer keeps a transposed copy
  // (TransposeScalesToKMajor).
  kCopy = 2,
};

// One scale per row (group or channel granularity) and no zero points: the
// spec half of wgmma_config.cuh's static_assert on k-major tiles.
KMajorScaleSource KMajorScaleSourceOf(const QuantSpec& spec);

// `rows` x `columns` elements of `element_bytes` each, row-major, as
// [column][row]: element (r, c) moves from (r * columns + c) to
// (c * rows + r). Pure CPU, once per layer.
std::vector<unsigned char> TransposeScalesToKMajor(
    const unsigned char* row_major, int64_t rows, int64_t columns,
    int element_bytes);

}  // namespace hummingd
