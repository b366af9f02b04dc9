#pragma once

// Quantize skeleton: dense (N, K) fp16/bf16 -> weights, scales, zero points
// and secondary scales in the dequant contract, byte-identical to
// ReferenceQuantize (the per-entry arithmetic is numeric/quantize_encode.cuh,
// shared with the reference). One warp owns one job: a whole scale entry, or
// the two 16-wide groups that share a 32-code chunk. The warp reduces the
// entry's min / max (exact, so order does not matter), derives the scale,
// then each lane packs whole 32-code chunks (`bits` words, no word shared
// between lanes or warps). A per-tensor scale is a single job: correct, but
// one warp walks the whole matrix, so it suits tests and small layers.

#include "arch/platform.cuh"
#include "gemm/dequant_config.cuh"
#include "numeric/formats.cuh"
#include "numeric/quantize_encode.cuh"
#include "numeric/scale_decode.cuh"
#include "pack/quantize_args.cuh"

namespace hummingd::device {

// Config: a DequantConfig (its output type is unused); kActivationType is
// the input dtype and the dtype of float zero points.
template <class Config>
struct QuantizePlan {
  static constexpr i64 kJobCols =
      Config::kScaleTileK >= 32 ? Config::kScaleTileK : 32;
  static constexpr i64 kJobRows = Config::kScaleTileN;
  static constexpr int kEntries =
      static_cast<int>(kJobCols / Config::kScaleTileK);  // 1 or 2
  static constexpr i64 kJobsPerRowBlock = Config::kK / kJobCols;
  static constexpr i64 kJobs = (Config::kN / kJobRows) * kJobsPerRowBlock;
  static constexpr i64 kWordsPerRow = Config::kK * Config::kBits / 32;
  static constexpr i64 kChunkCols = kJobCols / 32;
  static constexpr i64 kChunks = kJobRows * kChunkCols;
  static_assert(Config::kActivationType == ScalarType::kFp16 ||
                    Config::kActivationType == ScalarType::kBf16,
                "quantize reads fp16 or bf16 input");
  static_assert(kEntries == 1 || kEntries == 2, "unexpected scale tile");

  // A function, not a static member: device code may not odr-use a
  // class-type constexpr variable.
  HUMMINGD_HD static QuantizeFormat format() {
    return QuantizeFormat{Config::kKind,          Config::kBits,
                          Config::kExponentBits,  Config::kMantissaBits,
                          Config::kZero,          Config::kScaleType,
                          Config::kActivationType};
  }

  HUMMINGD_HD static i64 first_row(i64 job) {
    return (job / kJobsPerRowBlock) * kJobRows;
  }
  HUMMINGD_HD static i64 first_col(i64 job) {
    return (job % kJobsPerRowBlock) * kJobCols;
  }
  HUMMINGD_HD static i64 first_entry(i64 job) {
    return (first_row(job) / Config::kScaleTileN) * Config::kScaleColumns +
           first_col(job) / Config::kScaleTileK;
  }
};

template <class Config>
HUMMINGD_HD float quantize_load_input(const QuantizeArgs& args, i64 index) {
  const u16* g_input = static_cast<const u16*>(args.input);
  return decode_scalar<Config::kActivationType>(g_input[index]);
}

// Folds the elements lane, lane + lanes, … of job `job` into per-entry
// (r_lo, r_hi), which start at 0 (every range includes zero).
template <class Config>
HUMMINGD_HD void quantize_job_range(
    const QuantizeArgs& args, i64 job, int lane, int lanes,
    float (&r_lo)[QuantizePlan<Config>::kEntries],
    float (&r_hi)[QuantizePlan<Config>::kEntries]) {
  using Plan = QuantizePlan<Config>;
  const i64 row0 = Plan::first_row(job);
  const i64 col0 = Plan::first_col(job);
  for (i64 i = lane; i < Plan::kJobRows * Plan::kJobCols; i += lanes) {
    const i64 r = i / Plan::kJobCols;
    const i64 c = i - r * Plan::kJobCols;
    const float w =
        quantize_load_input<Config>(args, (row0 + r) * Config::kK + col0 + c);
    const int e =
        Plan::kEntries == 1 ? 0 : static_cast<int>(c / Config::kScaleTileK);
    r_lo[e] = w < r_lo[e] ? w : r_lo[e];
    r_hi[e] = w > r_hi[e] ? w : r_hi[e];
  }
}

// Writes the job's scales and zero points (one thread per job), and the
// secondary scales of its rows (all 1.0) when the job starts a row block.
template <class Config>
HUMMINGD_HD void quantize_job_write_entries(
    const QuantizeArgs& args, i64 job,
    const QuantizeEntry (&r_entries)[QuantizePlan<Config>::kEntries]) {
  using Plan = QuantizePlan<Config>;
  const i64 entry0 = Plan::first_entry(job);
  HUMMINGD_UNROLL
  for (int e = 0; e < Plan::kEntries; ++e) {
    const u32 bits = r_entries[e].scale_bits;
    if constexpr (ScalarTraits<Config::kScaleType>::kBytes == 4) {
      static_cast<u32*>(args.scales)[entry0 + e] = bits;
    } else if constexpr (ScalarTraits<Config::kScaleType>::kBytes == 2) {
      static_cast<u16*>(args.scales)[entry0 + e] = static_cast<u16>(bits);
    } else {
      static_cast<u8*>(args.scales)[entry0 + e] = static_cast<u8>(bits);
    }
    if constexpr (Config::kZero == ZeroKind::kInteger) {
      static_cast<u8*>(args.zero_points)[entry0 + e] =
          static_cast<u8>(r_entries[e].zero_bits);
    } else if constexpr (Config::kZero == ZeroKind::kFloat) {
      static_cast<u16*>(args.zero_points)[entry0 + e] =
          static_cast<u16>(r_entries[e].zero_bits);
    }
  }
  if constexpr (Config::kSecondary == SecondaryKind::kTensor) {
    if (job == 0) args.secondary_scale[0] = 1.0f;
  } else if constexpr (Config::kSecondary == SecondaryKind::kChannel) {
    if (Plan::first_col(job) == 0) {
      for (i64 r = 0; r < Plan::kJobRows; ++r) {
        args.secondary_scale[Plan::first_row(job) + r] = 1.0f;
      }
    }
  }
}

// Packs the 32-code chunks lane, lane + lanes, … of job `job`.
template <class Config>
HUMMINGD_HD void quantize_job_chunks(
    const QuantizeArgs& args, i64 job, int lane, int lanes,
    const QuantizeEntry (&r_entries)[QuantizePlan<Config>::kEntries]) {
  using Plan = QuantizePlan<Config>;
  constexpr int kBits = Config::kBits;
  const i64 row0 = Plan::first_row(job);
  const i64 col0 = Plan::first_col(job);
  const QuantizeFormat format = Plan::format();
  for (i64 chunk = lane; chunk < Plan::kChunks; chunk += lanes) {
    const i64 r = chunk / Plan::kChunkCols;
    const i64 c = (chunk - r * Plan::kChunkCols) * 32;
    const i64 base = (row0 + r) * Config::kK + col0 + c;
    u32 r_words[kBits];  // (kBits) = 32 codes
    HUMMINGD_UNROLL
    for (int w = 0; w < kBits; ++w) r_words[w] = 0u;
    HUMMINGD_UNROLL
    for (int i = 0; i < 32; ++i) {
      const int e = Plan::kEntries == 1
                        ? 0
                        : static_cast<int>((c + i) / Config::kScaleTileK);
      const u32 code = quantize_code(
          format, r_entries[e], quantize_load_input<Config>(args, base + i));
      const int bit = i * kBits;
      r_words[bit >> 5] |= code << (bit & 31);
      if ((bit & 31) + kBits > 32) {
        r_words[(bit >> 5) + 1] |= code >> (32 - (bit & 31));
      }
    }
    u32* g_dst = args.weights + (row0 + r) * Plan::kWordsPerRow +
                 ((col0 + c) >> 5) * kBits;
    HUMMINGD_UNROLL
    for (int w = 0; w < kBits; ++w) g_dst[w] = r_words[w];
  }
}

template <class Config>
HUMMINGD_HD void make_job_entries(
    const float (&r_lo)[QuantizePlan<Config>::kEntries],
    const float (&r_hi)[QuantizePlan<Config>::kEntries],
    QuantizeEntry (&r_entries)[QuantizePlan<Config>::kEntries]) {
  const QuantizeFormat format = QuantizePlan<Config>::format();
  HUMMINGD_UNROLL
  for (int e = 0; e < QuantizePlan<Config>::kEntries; ++e) {
    r_entries[e] = make_quantize_entry(format, r_lo[e], r_hi[e]);
  }
}

#if defined(__CUDA_ARCH__)
// One warp per job; `warp` is the global warp index.
template <class Config>
HUMMINGD_DEVICE void run_quantize(const QuantizeArgs& args, i64 warp,
                                  int lane) {
  using Plan = QuantizePlan<Config>;
  if (warp >= Plan::kJobs) return;  // whole warps exit together
  float r_lo[Plan::kEntries];
  float r_hi[Plan::kEntries];
  HUMMINGD_UNROLL
  for (int e = 0; e < Plan::kEntries; ++e) r_lo[e] = r_hi[e] = 0.0f;
  quantize_job_range<Config>(args, warp, lane, 32, r_lo, r_hi);
  HUMMINGD_UNROLL
  for (int e = 0; e < Plan::kEntries; ++e) {
    HUMMINGD_UNROLL
    for (int offset = 16; offset > 0; offset >>= 1) {
      const float lo = __shfl_xor_sync(0xFFFFFFFFu, r_lo[e], offset);
      const float hi = __shfl_xor_sync(0xFFFFFFFFu, r_hi[e], offset);
      r_lo[e] = lo < r_lo[e] ? lo : r_lo[e];
      r_hi[e] = hi > r_hi[e] ? hi : r_hi[e];
    }
  }
  QuantizeEntry r_entries[Plan::kEntries];
  make_job_entries<Config>(r_lo, r_hi, r_entries);
  if (lane == 0) quantize_job_write_entries<Config>(args, warp, r_entries);
  quantize_job_chunks<Config>(args, warp, lane, 32, r_entries);
}
#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
