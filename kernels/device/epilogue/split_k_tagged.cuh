#pragma once

// Split-K for the wgmma decode tiles without a fence or an arrival counter.
// Every split but the last publishes its fp32 partial sums as nonzero words
// (split_word_encode: the value's bits + 1, NaNs made canonical first, so no
// value encodes to 0) and its block exits at once; the block of the last
// split polls until every word it needs is nonzero, sums the splits in
// split order (deterministic, the order of split_k_reduce) and writes the
// words back to 0. Zero therefore means "not written yet", and the buffer
// (the launch's counter buffer, zeroed at allocation) is all zeros again
// after every launch, as its contract asks (schedule/split_k.cuh).
//
// Why: split_k_reduce publishes with one release atomic per block, and its
// fence (MEMBAR.ALL.GPU) waits for the block's stores to be acknowledged
// under full HBM load: the timeline probe saw 2.5 µs from the last
// accumulator to the arrival at p90. Here a writer's stores are posted, and
// the last split waits one L2 round trip after the last partial lands.
//
// Progress: the last split's blocks come after every other split's in the
// launch order (blockIdx.z is the grid's slowest dimension) and the writers
// never wait, so a poll ends even when the grid takes more than one wave.
//
// Layout: the tile's words for split z start at g_tile + z * split_stride;
// float4 group q of thread t is words (q * kThreads + t) * 4 .. + 3. Groups
// the caller marks dead (rows beyond M) are neither written nor read.

#include "arch/coherent_memory.cuh"
#include "arch/platform.cuh"

namespace hummingd::device {

// fp32 -> nonzero word and back (bit-exact for every non-NaN value; every
// NaN comes back as the canonical 0x7FFFFFFF).
HUMMINGD_HD u32 split_word_encode(float value) {
  const u32 bits = value != value ? 0x7FFFFFFFu : float_as_bits(value);
  return bits + 1u;
}

HUMMINGD_HD float split_word_decode(u32 word) {
  return bits_as_float(word - 1u);
}

#if defined(__CUDA_ARCH__)

// Splits whose words one poll keeps in flight: 64 registers of words for
// tiles of up to two float4 groups per thread, 32 above (the 16-token
// 256-row and 64-token tiles spilled with 64 beside their accumulators and
// sums).
template <int kGroups>
inline constexpr int kTaggedSplitBatch = kGroups <= 2
                                             ? 8
                                             : (kGroups >= 8 ? 1 : 8 / kGroups);

// Publishes this split's accumulators or, in the last split's block,
// replaces them by the sum over all splits. Returns false in every other
// block (which must then exit). Every thread of the block calls.
template <int kThreads, int kValues>
HUMMINGD_DEVICE bool tagged_split_k_reduce(float (&r_acc)[kValues],
                                           const bool (&live)[kValues / 4],
                                           u32* g_tile, i64 split_stride,
                                           int split, int splits, int thread) {
  static_assert(kValues % 4 == 0, "whole float4 groups");
  constexpr int kGroups = kValues / 4;
  constexpr int kBatch = kTaggedSplitBatch<kGroups>;
  auto words_of = [&](int z, int q) {
    return g_tile + z * split_stride + (q * kThreads + thread) * 4;
  };
  const int writers = splits - 1;
  if (split != writers) {
    HUMMINGD_UNROLL
    for (int q = 0; q < kGroups; ++q) {
      if (!live[q]) continue;
      u32 r_words[4];
      HUMMINGD_UNROLL
      for (int e = 0; e < 4; ++e)
        r_words[e] = split_word_encode(r_acc[4 * q + e]);
      store_relaxed_gpu_v4(words_of(split, q), r_words);
    }
    return false;
  }
  float r_sum[kValues];
  HUMMINGD_UNROLL
  for (int i = 0; i < kValues; ++i) r_sum[i] = 0.0f;
  for (int z0 = 0; z0 < writers; z0 += kBatch) {
    // Every poll of the batch is in flight before the first is checked.
    u32 r_words[kGroups][kBatch][4];
    HUMMINGD_UNROLL
    for (int q = 0; q < kGroups; ++q) {
      HUMMINGD_UNROLL
      for (int b = 0; b < kBatch; ++b) {
        if (live[q] && z0 + b < writers) {
          load_relaxed_gpu_v4(words_of(z0 + b, q), r_words[q][b]);
        }
      }
    }
    HUMMINGD_UNROLL
    for (int q = 0; q < kGroups; ++q) {
      HUMMINGD_UNROLL
      for (int b = 0; b < kBatch; ++b) {
        if (!live[q] || z0 + b >= writers) continue;
        u32(&w)[4] = r_words[q][b];
        while (w[0] == 0u || w[1] == 0u || w[2] == 0u || w[3] == 0u) {
          load_relaxed_gpu_v4(words_of(z0 + b, q), w);
        }
        HUMMINGD_UNROLL
        for (int e = 0; e < 4; ++e) r_sum[4 * q + e] += split_word_decode(w[e]);
      }
    }
  }
  // This split comes last in split order; then the words are cleared for
  // the next launch (which reaches them only after this grid completes).
  const u32 r_zero[4] = {0u, 0u, 0u, 0u};
  HUMMINGD_UNROLL
  for (int q = 0; q < kGroups; ++q) {
    HUMMINGD_UNROLL
    for (int e = 0; e < 4; ++e)
      r_acc[4 * q + e] = r_sum[4 * q + e] + r_acc[4 * q + e];
    if (!live[q]) continue;
    for (int z = 0; z < writers; ++z)
      store_relaxed_gpu_v4(words_of(z, q), r_zero);
  }
  return true;
}

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
