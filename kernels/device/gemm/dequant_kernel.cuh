#pragma once

// Dequant skeleton: quantized weights -> dense (N, K) fp16/bf16. Each thread
// owns one 32-code chunk of a row (exactly `bits` words): one or two vector
// loads, decode in registers, scale math, and 64 bytes of output that leave
// through a per-warp shared-memory stage as contiguous 16-byte stores.
//
// Numerics: the contract (kernels/reference/dequant_reference.h) is
//   out = round16(fp32(value * scale * secondary evaluated in fp64)).
// Where fp32 arithmetic provably gives the same bits, the kernel uses it:
//  - no secondary scale: value * scale is exact in fp64 (<= 8 + 24
//    significant bits), so one fp32 multiply rounds the same exact product;
//  - secondary with fp16/e4m3/e5m2 scales: value * scale has <= 19
//    significant bits and stays in the fp32 normal range for every weight
//    format, so it is exact in fp32 and the second multiply rounds once.
// Float zero points (q - z rounds) and fp32/bf16/ue8m0 scales with a
// secondary (the product can exceed 24 bits or the fp32 range) take the fp64
// path, which repeats the reference's operations in order.
// A float format's exponent offset (an exact power of two) is folded into the
// scale when the scale dtype's range keeps the product finite, else it is
// multiplied per element; both give the same bits.

#include "arch/float_ops.cuh"
#include "arch/platform.cuh"
#include "epilogue/output_pack.cuh"
#include "gemm/dequant_args.cuh"
#include "gemm/dequant_config.cuh"
#include "memory/chunk_load.cuh"
#include "memory/scalar_load.cuh"
#include "memory/warp_stage.cuh"
#include "numeric/code_extract.cuh"
#include "numeric/formats.cuh"
#include "numeric/scale_decode.cuh"

namespace hummingd::device {

template <class Config>
struct DequantChunkPlan {
  using Decoder = typename Config::Decoder;
  // Scale entries one chunk touches (2 for 16-wide groups, else 1).
  static constexpr int kScaleEntries =
      Config::kScaleTileK >= Config::kCodesPerChunk
          ? 1
          : static_cast<int>(Config::kCodesPerChunk / Config::kScaleTileK);
  static constexpr int kCodesPerEntry = Config::kCodesPerChunk / kScaleEntries;
  static constexpr int kExponentOffset = Decoder::kExponentOffset;
  static constexpr bool kWideProduct =
      Config::kZero == ZeroKind::kFloat ||
      (Config::kSecondary != SecondaryKind::kNone &&
       (Config::kScaleType == ScalarType::kFp32 ||
        Config::kScaleType == ScalarType::kBf16 ||
        Config::kScaleType == ScalarType::kUe8m0));
  static constexpr bool kFoldOffsetIntoScale =
      !kWideProduct && kExponentOffset != 0 &&
      ScalarTraits<Config::kScaleType>::kMaxExponent + kExponentOffset <= 127;
  static constexpr bool kOffsetPerElement =
      !kWideProduct && kExponentOffset != 0 && !kFoldOffsetIntoScale;
  static constexpr int kOutputWords = Config::kCodesPerChunk / 2;
};

// Dequantizes chunk `chunk` (0 <= chunk < Config::kChunks) into its 32
// packed 16-bit outputs. Host-callable so that tests run the exact device
// arithmetic against the CPU reference.
template <class Config>
HUMMINGD_HD void dequant_chunk_packed(
    const DequantArgs& args, i64 chunk,
    u32 (&r_packed)[DequantChunkPlan<Config>::kOutputWords]) {
  using Plan = DequantChunkPlan<Config>;
  using Decoder = typename Plan::Decoder;
  constexpr int kBits = Config::kBits;

  const i64 row = chunk / Config::kChunksPerRow;
  const i64 column =
      (chunk - row * Config::kChunksPerRow) * Config::kCodesPerChunk;

  u32 r_words[kBits];  // (kBits) = 32 codes
  load_chunk(args.weights + chunk * kBits, r_words);

  const i64 first_entry = (row / Config::kScaleTileN) * Config::kScaleColumns +
                          column / Config::kScaleTileK;
  float r_scale[Plan::kScaleEntries];  // (kScaleEntries)
  float r_zero[Plan::kScaleEntries];   // (kScaleEntries)
  HUMMINGD_UNROLL
  for (int e = 0; e < Plan::kScaleEntries; ++e) {
    float scale = decode_scalar<Config::kScaleType>(
        load_scalar_raw<Config::kScaleType>(args.scales, first_entry + e));
    if constexpr (Plan::kFoldOffsetIntoScale) {
      scale = mul_rn(scale, exp2_int(Plan::kExponentOffset));
    }
    r_scale[e] = scale;
    if constexpr (Config::kZero == ZeroKind::kInteger) {
      r_zero[e] = Decoder::prepare_zero(
          load_element_raw<1>(args.zero_points, first_entry + e));
    } else if constexpr (Config::kZero == ZeroKind::kFloat) {
      r_zero[e] =
          Decoder::prepare_zero(load_scalar_raw<Config::kActivationType>(
              args.zero_points, first_entry + e));
    } else {
      r_zero[e] = 0.0f;
    }
  }

  float secondary = 1.0f;
  if constexpr (Config::kSecondary == SecondaryKind::kTensor) {
    secondary = args.secondary_scale[0];
  } else if constexpr (Config::kSecondary == SecondaryKind::kChannel) {
    secondary = args.secondary_scale[row];
  }

  float r_values[Config::kCodesPerChunk];  // (32)
  HUMMINGD_UNROLL
  for (int i = 0; i < Config::kCodesPerChunk; ++i) {
    const int e = i / Plan::kCodesPerEntry;
    const u32 code = extract_code<kBits>(r_words, i);
    if constexpr (Plan::kWideProduct) {
      double w = mul_rn(Decoder::decode_wide(code, r_zero[e]),
                        static_cast<double>(r_scale[e]));
      if constexpr (Config::kSecondary != SecondaryKind::kNone) {
        w = mul_rn(w, static_cast<double>(secondary));
      }
      r_values[i] = narrow_rn(w);
    } else {
      float value = Decoder::decode(code, r_zero[e]);
      if constexpr (Plan::kOffsetPerElement) {
        value = mul_rn(value, exp2_int(Plan::kExponentOffset));
      }
      float w = mul_rn(value, r_scale[e]);
      if constexpr (Config::kSecondary != SecondaryKind::kNone) {
        w = mul_rn(w, secondary);
      }
      r_values[i] = w;
    }
  }

  pack_output_pairs<Config::kOutputType>(r_values, r_packed);
}

// One chunk end to end with direct 16-byte stores (the host-testable path).
template <class Config>
HUMMINGD_HD void dequant_chunk(const DequantArgs& args, i64 chunk) {
  using Plan = DequantChunkPlan<Config>;
  u32 r_packed[Plan::kOutputWords];  // (16) pairs of 16-bit outputs
  dequant_chunk_packed<Config>(args, chunk, r_packed);
  store_chunk(static_cast<u32*>(args.output) + chunk * Plan::kOutputWords,
              r_packed);
}

#if defined(__CUDA_ARCH__)

// The whole kernel body: one chunk per thread, chunks in launch order so that
// a warp's loads are contiguous; the warp's 2 KB of outputs leave through a
// shared-memory stage so that its stores are contiguous too.
template <class Config, int kThreads>
HUMMINGD_DEVICE void run_dequant(const DequantArgs& args, u32 thread_index,
                                 u32 block_index) {
  static_assert(kThreads % 32 == 0, "whole warps");
  static_assert(DequantChunkPlan<Config>::kOutputWords == kStageRowWords,
                "one chunk is one stage row");
  __shared__ u32 s_stage[(kThreads / 32) * kStageWords];  // (warps, 32, 16)
  const int lane = static_cast<int>(thread_index & 31u);
  const i64 chunk = static_cast<i64>(block_index) * kThreads + thread_index;
  const i64 warp_first_chunk = chunk - lane;
  const i64 remaining = Config::kChunks - warp_first_chunk;
  if (remaining <= 0) return;  // uniform across the warp

  u32 r_packed[kStageRowWords];  // (16) this chunk's outputs
  if (chunk < Config::kChunks) {
    dequant_chunk_packed<Config>(args, chunk, r_packed);
  } else {
    HUMMINGD_UNROLL
    for (int i = 0; i < kStageRowWords; ++i) r_packed[i] = 0u;
  }
  store_rows_staged(
      static_cast<u32*>(args.output) + warp_first_chunk * kStageRowWords,
      r_packed, s_stage + (thread_index / 32u) * kStageWords, lane,
      remaining < 32 ? static_cast<int>(remaining) : 32);
}

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
