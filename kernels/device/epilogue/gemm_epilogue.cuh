#pragma once

// GEMM epilogue: the split-K reduction (deterministic: the last block of a
// tile to arrive sums every split's partial in split order) and the
// fragment store (secondary scale, bias, rounding to the output type, rows
// beyond M skipped). Device only.

#include "arch/coherent_memory.cuh"
#include "arch/platform.cuh"
#include "numeric/float_encode.cuh"
#include "numeric/scale_decode.cuh"
#include "schedule/split_k.cuh"

namespace hummingd::device {

#if defined(__CUDA_ARCH__)

// Publishes this split's accumulators and, in the block that completes the
// tile, replaces them by the sum over all splits. Returns false in every
// other block (which must then exit). Every thread of the block calls.
// g_slots: this tile's first partial; split z's partial is at
// g_slots + z * slot_stride floats.
// Small tiles fetch this many splits' partials at once.
inline constexpr int kSplitBatch = 8;

template <int kThreads, int kValues>
HUMMINGD_DEVICE bool split_k_reduce(float (&r_acc)[kValues], float* g_slots,
                                    i64 slot_stride, u32* g_counter, int split,
                                    int splits, int thread) {
  static_assert(kValues % 4 == 0, "whole float4s");
  __shared__ u32 s_is_last;
  auto slot = [&](int z) { return g_slots + z * slot_stride; };
  float* g_mine = slot(split);
  HUMMINGD_UNROLL
  for (int i = 0; i < kValues / 4; ++i) {
    store_global_cg_v4(g_mine + (i * kThreads + thread) * 4, r_acc + 4 * i);
  }
  // The barrier orders every thread's partial before thread 0's arrival,
  // whose release (cumulative over what the barrier ordered) publishes the
  // whole block's partials at GPU scope; the last block's acquire, then its
  // barrier, make every other block's partials visible to all its threads.
  // One acq_rel atomic per block instead of a full fence per thread.
  __syncthreads();
  if (thread == 0) {
    const u32 arrived = atomic_fetch_add_acq_rel_gpu(g_counter, 1u);
    s_is_last = arrived == static_cast<u32>(splits - 1);
  }
  __syncthreads();
  if (!s_is_last) return false;
  if constexpr (kValues >= 128) {
    // A second set of kValues sums would spill (256-token tiles: 128
    // accumulators per thread), so the sums build in r_acc itself, with
    // this split's partial read back from the workspace (the thread's own
    // writes above): the same additions in the same split order.
    HUMMINGD_UNROLL
    for (int i = 0; i < kValues; ++i) r_acc[i] = 0.0f;
    for (int z = 0; z < splits; ++z) {
      const float* g_slot = slot(z);
      HUMMINGD_UNROLL
      for (int i = 0; i < kValues / 4; ++i) {
        float r_part[4];
        load_global_cg_v4(g_slot + (i * kThreads + thread) * 4, r_part);
        HUMMINGD_UNROLL
        for (int e = 0; e < 4; ++e) r_acc[4 * i + e] += r_part[e];
      }
    }
  } else {
    float r_sum[kValues];
    HUMMINGD_UNROLL
    for (int i = 0; i < kValues; ++i) r_sum[i] = 0.0f;
    // One split at a time: a float4 of each of this thread's values.
    auto sum_split_by_split = [&]() {
      for (int z = 0; z < splits; ++z) {
        const float* g_slot = slot(z);
        HUMMINGD_UNROLL
        for (int i = 0; i < kValues / 4; ++i) {
          float r_part[4];
          if (z == split) {
            HUMMINGD_UNROLL
            for (int e = 0; e < 4; ++e) r_part[e] = r_acc[4 * i + e];
          } else {
            load_global_cg_v4(g_slot + (i * kThreads + thread) * 4, r_part);
          }
          HUMMINGD_UNROLL
          for (int e = 0; e < 4; ++e) r_sum[4 * i + e] += r_part[e];
        }
      }
    };
    if constexpr (kValues <= 16) {
      // Few values per thread (decode tiles): fetch a float4 of up to
      // kSplitBatch splits at once, so the tail costs one L2 round trip per
      // float4 and batch rather than one per split. Sums stay in split order.
      for (int z0 = 0; z0 < splits; z0 += kSplitBatch) {
        HUMMINGD_UNROLL
        for (int i = 0; i < kValues / 4; ++i) {
          float r_part[kSplitBatch][4];
          HUMMINGD_UNROLL
          for (int b = 0; b < kSplitBatch; ++b) {
            const int z = z0 + b;
            if (z < splits && z != split) {
              load_global_cg_v4(slot(z) + (i * kThreads + thread) * 4,
                                r_part[b]);
            }
          }
          HUMMINGD_UNROLL
          for (int b = 0; b < kSplitBatch; ++b) {
            const int z = z0 + b;
            if (z >= splits) break;
            HUMMINGD_UNROLL
            for (int e = 0; e < 4; ++e) {
              r_sum[4 * i + e] += z == split ? r_acc[4 * i + e] : r_part[b][e];
            }
          }
        }
      }
    } else {
      sum_split_by_split();
    }
    HUMMINGD_UNROLL
    for (int i = 0; i < kValues; ++i) r_acc[i] = r_sum[i];
  }
  if (thread == 0) *g_counter = 0u;  // ready for the next launch
  return true;
}

// split_k_reduce for the block tile at (block_m, block_n) of a
// kBlockRows x kBlockCols tiling of an N-wide output: its slots in the
// workspace and its arrival counter (schedule/split_k.cuh's layout).
// r_flat: the thread's accumulators, in any fixed order.
template <int kThreads, int kBlockRows, int kBlockCols, i64 kN, int kValues>
HUMMINGD_DEVICE bool reduce_split_k_tile(float (&r_flat)[kValues],
                                         void* g_workspace, u32* g_counters,
                                         u32 block_m, u32 block_n, u32 split,
                                         u32 splits, u32 thread) {
  constexpr i64 kNBlocks = kN / kBlockCols;
  constexpr i64 kTileElems = static_cast<i64>(kBlockRows) * kBlockCols;
  float* g_slots =
      static_cast<float*>(g_workspace) +
      block_m * split_k_block_floats(kNBlocks, splits, kTileElems) +
      block_n * kTileElems;
  u32* g_counter =
      g_counters +
      split_k_counter_index(block_m, block_n, kBlockRows, kBlockCols, kN);
  return split_k_reduce<kThreads>(r_flat, g_slots, kNBlocks * kTileElems,
                                  g_counter, static_cast<int>(split),
                                  static_cast<int>(splits),
                                  static_cast<int>(thread));
}

// Two accumulators (row, col) and (row, col + 1) -> output, with the
// optional secondary scale and bias. Nothing is written for row >= m.
template <class Format, i64 kN>
HUMMINGD_DEVICE void store_output_pair(void* g_y, const float* g_secondary,
                                       const void* g_bias, i64 m, i64 row,
                                       i64 col, float v0, float v1) {
  if (row >= m) return;
  if constexpr (Format::kSecondary == SecondaryKind::kTensor) {
    v0 *= g_secondary[0];
    v1 *= g_secondary[0];
  } else if constexpr (Format::kSecondary == SecondaryKind::kChannel) {
    v0 *= g_secondary[col];
    v1 *= g_secondary[col + 1];
  }
  if constexpr (Format::kHasBias) {
    const u32 raw = static_cast<const u32*>(g_bias)[col / 2];
    v0 += decode_scalar<Format::kOutputType>(raw & 0xFFFFu);
    v1 += decode_scalar<Format::kOutputType>(raw >> 16);
  }
  const u32 packed = Format::kOutputType == ScalarType::kBf16
                         ? encode_bf16x2(v0, v1)
                         : encode_fp16x2(v0, v1);
  store_global_u32(static_cast<u32*>(g_y) + (row * kN + col) / 2, packed);
}

// One accumulator (row, col) -> output, as store_output_pair (the
// transposed-operand kernels hold no two adjacent columns of a row).
template <class Format, i64 kN>
HUMMINGD_DEVICE void store_output_element(void* g_y, const float* g_secondary,
                                          const void* g_bias, i64 m, i64 row,
                                          i64 col, float value) {
  if (row >= m) return;
  if constexpr (Format::kSecondary == SecondaryKind::kTensor) {
    value *= g_secondary[0];
  } else if constexpr (Format::kSecondary == SecondaryKind::kChannel) {
    value *= g_secondary[col];
  }
  if constexpr (Format::kHasBias) {
    value += decode_scalar<Format::kOutputType>(
        static_cast<const u16*>(g_bias)[col]);
  }
  const u32 packed = Format::kOutputType == ScalarType::kBf16
                         ? encode_bf16x2(value, 0.0f)
                         : encode_fp16x2(value, 0.0f);
  static_cast<u16*>(g_y)[row * kN + col] = static_cast<u16>(packed & 0xFFFFu);
}

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
