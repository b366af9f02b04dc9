#pragma once

// The spec grid the quantize tests share: every weight kind and width, every
// zero-point kind, every scale dtype and granularity, both secondary scales.

#include <cstdint>
#include <vector>

namespace hummingd::testing {

struct QuantizeGridSpec {
  const char* text;
  int64_t n;
  int64_t k;
};

inline const std::vector<QuantizeGridSpec>& QuantizeGrid() {
  static const std::vector<QuantizeGridSpec> kGrid = {
      {"weight=uint1,group=16,scale=fp16", 8, 64},
      {"weight=uint2,group=32,scale=fp32", 8, 128},
      {"weight=uint3,group=64,scale=fp16,act=bf16", 8, 128},
      {"weight=uint4,group=128,scale=fp16", 16, 256},
      {"weight=uint5,group=16,scale=bf16,act=bf16", 8, 64},
      {"weight=uint6,group=channel,scale=fp16", 8, 96},
      {"weight=uint7,group=tensor,scale=fp32", 8, 64},
      {"weight=uint8,group=32,scale=e4m3", 8, 128},
      {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16", 16, 256},
      {"weight=uint3,group=16,scale=fp16,zero=int", 8, 64},
      {"weight=uint8,group=channel,scale=fp32,zero=int", 8, 64},
      {"weight=uint4,group=64,scale=fp16,zero=float", 8, 128},
      {"weight=uint2,group=32,scale=bf16,zero=float,act=bf16", 8, 64},
      {"weight=int2,group=32,scale=fp16", 8, 64},
      {"weight=int4,group=128,scale=fp16,scale2=channel", 16, 256},
      {"weight=int8,group=channel,scale=bf16,act=bf16", 8, 64},
      {"weight=int5,group=16x16,scale=e5m2", 32, 64},
      {"weight=e4m3,group=channel,scale=fp32,act=bf16", 8, 64},
      {"weight=e4m3,group=128x128,scale=fp32", 128, 256},
      {"weight=e5m2,group=tensor,scale=fp16", 8, 64},
      {"weight=e2m1,group=32,scale=ue8m0,act=bf16", 8, 128},
      {"weight=e2m1,group=16,scale=e4m3,scale2=tensor", 8, 64},
      {"weight=e3m2,group=32,scale=fp16", 8, 64},
      {"weight=e2m3,group=64,scale=e5m2", 8, 128},
      {"weight=e3m4,group=32,scale=ue8m0", 8, 64},
      {"weight=uint4,group=16x32,scale=ue8m0", 32, 64},
  };
  return kGrid;
}

}  // namespace hummingd::testing
