#pragma once

// The layers and specs of issue 5's decode table (its six layers, the table
// of record's four specs): the defaults of hummingd_gemm_bench and
// hummingd_planned_cubins, and the cases the planner and compile tests pin
// (tests/unit/kernels/gemm/gemm_request.h), so that all of them look at the
// same kernels. Plus the "NxK,..." list parser the two tools share.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/layer_shape.h"

namespace hummingd::bench {

inline constexpr std::pair<int64_t, int64_t> kDecodeLayers[] = {
    {8192, 8192}, {28672, 8192}, {8192, 28672},
    {4096, 4096}, {6144, 4096},  {4096, 14336}};
inline constexpr const char* kDecodeSpecs[] = {
    "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
    "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16",
    "weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
    "weight=e4m3,group=128,scale=fp16,act=fp16,out=fp16"};

// The same as flag text: "NxK,NxK,..." and "spec;spec;...".
std::string DecodeLayersText();
std::string DecodeSpecsText();

// "NxK,NxK,...": every item two positive integers joined by 'x'.
absl::StatusOr<std::vector<LayerShape>> ParseShapeList(absl::string_view text);

}  // namespace hummingd::bench
