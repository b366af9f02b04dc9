#pragma once

// The layers and specs the decode benchmark measures by default (issue 5's
// six layers, the table of record's four specs), and the "NxK,..." list
// parser, shared by hummingd_gemm_bench and hummingd_planned_cubins so that
// the two always look at the same kernels.

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/layer_shape.h"

namespace hummingd::bench {

inline constexpr char kDecodeSpecsText[] =
    "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16;"
    "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16;"
    "weight=uint8,group=128,scale=fp16,act=fp16,out=fp16;"
    "weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16";

inline constexpr char kDecodeShapesText[] =
    "8192x8192,28672x8192,8192x28672,4096x4096,6144x4096,4096x14336";

// "NxK,NxK,...": every item two positive integers joined by 'x'.
absl::StatusOr<std::vector<LayerShape>> ParseShapeList(absl::string_view text);

}  // namespace hummingd::bench
