#pragma once

// The compile-time description of one dequant kernel, instantiated by a
// generated stub from closed enums and integers only.

#include "arch/platform.cuh"
#include "numeric/formats.cuh"
#include "numeric/weight_decode.cuh"

namespace hummingd::device {

// kScaleBlockN/K: group -> (1, group_size); block -> (block_n, block_k);
// channel and tensor ignore them. kActivationType is the dtype of float zero
// points.
template <CodeKind kKind_, int kBits_, int kExponentBits_, int kMantissaBits_,
          ScaleLayout kScaleLayout_, int kScaleBlockN_, int kScaleBlockK_,
          ScalarType kScaleType_, ZeroKind kZero_, SecondaryKind kSecondary_,
          ScalarType kActivationType_, ScalarType kOutputType_, i64 kN_,
          i64 kK_>
struct DequantConfig
    : ScaleTiling<kScaleLayout_, kScaleBlockN_, kScaleBlockK_, kN_, kK_> {
  static constexpr CodeKind kKind = kKind_;
  static constexpr int kBits = kBits_;
  static constexpr int kExponentBits = kExponentBits_;
  static constexpr int kMantissaBits = kMantissaBits_;
  static constexpr ScaleLayout kScaleLayout = kScaleLayout_;
  static constexpr int kScaleBlockN = kScaleBlockN_;
  static constexpr int kScaleBlockK = kScaleBlockK_;
  static constexpr ScalarType kScaleType = kScaleType_;
  static constexpr ZeroKind kZero = kZero_;
  static constexpr SecondaryKind kSecondary = kSecondary_;
  static constexpr ScalarType kActivationType = kActivationType_;
  static constexpr ScalarType kOutputType = kOutputType_;
  static constexpr i64 kN = kN_;
  static constexpr i64 kK = kK_;

  using Decoder = WeightDecoder<kKind_, kBits_, kExponentBits_, kMantissaBits_,
                                kZero_, kActivationType_>;

  // One thread's work: 32 codes of one row = exactly kBits words.
  static constexpr int kCodesPerChunk = 32;
  static constexpr i64 kChunksPerRow = kK / kCodesPerChunk;
  static constexpr i64 kChunks = kN * kChunksPerRow;

  // The (rows, columns) of W one scale entry covers (numeric/formats.cuh).
  using Scales =
      ScaleTiling<kScaleLayout_, kScaleBlockN_, kScaleBlockK_, kN_, kK_>;
  using Scales::kScaleColumns;
  using Scales::kScaleTileK;
  using Scales::kScaleTileN;

  static_assert(kK % kCodesPerChunk == 0, "K must be a multiple of 32");
  static_assert(kN > 0 && kK > 0, "empty matrix");
  static_assert(kScaleTileN > 0 && kN % kScaleTileN == 0,
                "N must be a multiple of the scale tile");
  static_assert(kScaleTileK > 0 && kK % kScaleTileK == 0,
                "K must be a multiple of the scale tile");
  static_assert(kScaleTileK % kCodesPerChunk == 0 ||
                    kCodesPerChunk % kScaleTileK == 0,
                "a chunk must cover whole scale entries or lie in one");
  static_assert(kZero == ZeroKind::kNone || kKind == CodeKind::kUint,
                "zero points apply to uint codes only");
};

}  // namespace hummingd::device
