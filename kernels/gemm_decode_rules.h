#pragma once

// What the Hopper decode planner's rules share (gemm_decode_plan.cc,
// gemm_decode_ksplit.cc, gemm_decode_tile_options.cc): the per-block
// shared-memory budgets the sweeps planned with at one to four blocks per SM,
// and the spec classes their measurements distinguish.

#include <algorithm>
#include <cstdint>
#include <optional>

#include "kernels/gemm_config.h"
#include "kernels/layer_shape.h"
#include "kernels/quant_spec.h"

namespace hummingd {

// Shared memory per block for four, three, two and one blocks per SM
// (56, 75, 113 and 227 KB, less the kernels' 16 static bytes: the sweeps
// measured these budgets, and no tile they planned sat in those last bytes).
inline constexpr int kFourBlocksSharedBytes = Sm90SharedBytesForAtLeast(4);
inline constexpr int kThreeBlocksSharedBytes = Sm90SharedBytesForAtLeast(3);
inline constexpr int kTwoBlocksSharedBytes = Sm90SharedBytesForAtLeast(2);
inline constexpr int kOneBlockSharedBytes = Sm90SharedBytesForAtLeast(1);
static_assert(kFourBlocksSharedBytes + kGemmStaticSharedBytes == 56 * 1024 &&
                  kThreeBlocksSharedBytes + kGemmStaticSharedBytes ==
                      75 * 1024 &&
                  kTwoBlocksSharedBytes + kGemmStaticSharedBytes ==
                      113 * 1024 &&
                  kOneBlockSharedBytes + kGemmStaticSharedBytes == 227 * 1024,
              "the budgets the sweeps were planned with");

// Scale entries narrower than 128 columns along K (groups, or the K side
// of 2-D blocks).
inline bool HasFineScales(const QuantSpec& spec) {
  return (spec.granularity == ScaleGranularity::kGroup &&
          spec.group_size < 128) ||
         (spec.granularity == ScaleGranularity::kBlock && spec.block_k < 128);
}

// Groups of 32 or 64 columns along K with weights of at most 4 bits: they
// take the rules measured with groups of 128 since planner v35 (sweep bs,
// bench/results/tile-sweep-bs-0deaee3.json, ran uint4 with 16-bit scales
// and no zero points; other 4-bit and narrower specs with these groups are
// taken by the same rules unmeasured, as the group-128 rules take them),
// except where groups of 32 share bf16's limit on long splits
// (LongSplitTileCandidate) or keep the 64-row half tile (PlanWgmmaDecode).
inline bool HasGroupRulesFineScales(const QuantSpec& spec) {
  return spec.granularity == ScaleGranularity::kGroup &&
         (spec.group_size == 32 || spec.group_size == 64) &&
         spec.weight.bits <= 4;
}

// The 4-bit specs the 16-token sixteen-warp rule (planner v24), the long-K
// rule (v55, v56) and the warpgroup k-slices (v57, v60) were measured with:
// uint4 in groups of 128 with 16-bit scales, no zero points or second scale,
// and groups of 32 and 64, which take the group-128 rules (planners v35 /
// v36).
inline bool IsMeasuredFourBitGroupSpec(const QuantSpec& spec) {
  const bool group_rules = (spec.granularity == ScaleGranularity::kGroup &&
                            spec.group_size == 128) ||
                           HasGroupRulesFineScales(spec);
  return spec.weight.kind == WeightKind::kUint && spec.weight.bits == 4 &&
         group_rules &&
         (spec.scale_type == DataType::kFp16 ||
          spec.scale_type == DataType::kBf16) &&
         spec.zero_point == ZeroPointKind::kNone &&
         spec.secondary_scale == SecondaryScale::kNone;
}

// uint4 weights with 16-bit scales and no second scale: what the 4-bit
// classes below share with IsMeasuredFourBitGroupSpec.
inline bool IsUint4WithSixteenBitScales(const QuantSpec& spec) {
  return spec.weight.kind == WeightKind::kUint && spec.weight.bits == 4 &&
         (spec.scale_type == DataType::kFp16 ||
          spec.scale_type == DataType::kBf16) &&
         spec.secondary_scale == SecondaryScale::kNone;
}

// Two 4-bit classes sweeps ff and fg (planner v69, decode-notes v121) ran on
// the warpgroup k-slices and the 16-token sixteen-warp tile beside the
// measured groups: uint4 with channel-wise 16-bit scales, and uint4 with
// 16-bit scales in groups of 128 or 64 with integer zero points (the GPTQ /
// AWQ layout).
inline bool IsUint4ChannelSpec(const QuantSpec& spec) {
  return IsUint4WithSixteenBitScales(spec) &&
         spec.granularity == ScaleGranularity::kChannel &&
         spec.zero_point == ZeroPointKind::kNone;
}
inline bool IsUint4ZeroPointGroupSpec(const QuantSpec& spec) {
  return IsUint4WithSixteenBitScales(spec) &&
         spec.granularity == ScaleGranularity::kGroup &&
         (spec.group_size == 128 || spec.group_size == 64) &&
         spec.zero_point == ZeroPointKind::kInteger;
}

// uint4 in groups of 32 with fp16 scales, activations and integer zero
// points: the one zero-point class pre-scaled operands won on at 64 tokens
// (sweep fm, planner v73, decode-notes v127).
inline bool IsFp16Uint4ZeroPointGroupsOf32Spec(const QuantSpec& spec) {
  return IsUint4WithSixteenBitScales(spec) &&
         spec.granularity == ScaleGranularity::kGroup &&
         spec.group_size == 32 && spec.zero_point == ZeroPointKind::kInteger &&
         spec.scale_type == DataType::kFp16 &&
         spec.activation_type == DataType::kFp16;
}

// Fine scales that no decode sweep ran with the tiles of coarse ones, which
// keep their own: groups under 32 columns, 2-D blocks under 128, and fine
// groups of weights wider than 4 bits.
inline bool HasUnmeasuredFineScales(const QuantSpec& spec) {
  return HasFineScales(spec) && !HasGroupRulesFineScales(spec);
}

// Groups of 32 columns among those (HasGroupRulesFineScales): their scale
// loads tip two choices the other way (LongSplitTileCandidate,
// PlanWgmmaDecode; planners v35, v36).
inline bool HasGroupsOf32(const QuantSpec& spec) {
  return HasGroupRulesFineScales(spec) && spec.group_size == 32;
}

// Whether `tile` fits `shared_budget` per block (and the GPU's limit) and
// is a legal tile of the layer.
inline bool FitsAndValidates(const GemmTileConfig& tile, int shared_budget,
                             const QuantSpec& spec, const LayerShape& shape,
                             int smem_limit) {
  return tile.SharedBytes(spec) <= std::min(shared_budget, smem_limit) &&
         ValidateGemmTile(tile, shape.n, shape.k).ok();
}

// Whether the k-major kernel can read `spec`'s scales on `tile` over K = `k`
// (WgmmaTakesKMajorScales asked of the tile with layout=kmajor set): the
// capability half of each k-major rule, which then names where it won.
inline bool TileCanReadKMajorScales(const GemmTileConfig& tile,
                                    const QuantSpec& spec, int64_t k) {
  GemmTileConfig k_major = tile;
  k_major.k_major_scales = true;
  return WgmmaTakesKMajorScales(k_major, spec, k);
}

// The 64-row, one-warpgroup half of a 128-row two-warpgroup tile (same
// tokens, k-tile and stages) with launch bounds for `blocks_per_sm` (0: the
// default count), or nothing where it does not fit `shared_budget` or the
// layer. Planned at 8 tokens four per SM (gemm_decode_plan.cc,
// LongSplitTileCandidate) and at 32 and 64 tokens in half the splits
// (gemm_decode_short_splits.cc).
inline std::optional<GemmTileConfig> OneWarpgroupHalfTile(
    const GemmTileConfig& tile, int blocks_per_sm, int shared_budget,
    const QuantSpec& spec, const LayerShape& shape, int smem_limit) {
  GemmTileConfig half = tile;
  half.block_n = tile.block_n / 2;
  half.warps_n = tile.warps_n / 2;
  half.blocks_per_sm = blocks_per_sm;
  if (half.warps_n != 4 ||
      !FitsAndValidates(half, shared_budget, spec, shape, smem_limit)) {
    return std::nullopt;
  }
  return half;
}

}  // namespace hummingd
