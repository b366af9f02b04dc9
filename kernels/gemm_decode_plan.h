#pragma once

// The decode (M <= 64) half of a GEMM plan on Hopper: wgmma kernels with
// the weights as the 64-row A operand and the tokens as N (block_m 8, 16,
// 32, 64 for M in 1-8, 9-16, 17-32, 33-64). Everything here is a pure
// function of (spec, N, K, SM count, shared-memory limit, launch ABI), so
// plans stay deterministic.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/gemm_config.h"
#include "kernels/launch_abi.h"
#include "kernels/layer_shape.h"
#include "kernels/plan.h"
#include "kernels/quant_spec.h"

namespace hummingd {

// A GEMM plan entry for `tile` over M in [m_min, m_max] with `splits`
// split-K slices: grid (ceil(M / BM), N / BN, splits); wgmma tiles launch
// as programmatic dependents and ask for enough shared memory (up to
// smem_limit, the GPU's opt-in maximum) that no more blocks than planned
// fit on an SM.
PlanEntry MakeGemmPlanEntry(int64_t m_min, int64_t m_max,
                            const GemmTileConfig& tile, const QuantSpec& spec,
                            const LayerShape& shape, int64_t splits,
                            int smem_limit);

// The filled fraction of the last wave of blocks x splits on `slots`
// concurrently resident blocks, discounted by the fp32 partials' traffic
// (reduction_bytes_per_split per split, against stream_bytes of weights).
double SplitKScore(int64_t blocks, int64_t splits, int64_t slots,
                   double reduction_bytes_per_split, double stream_bytes);

// The split-K factor for `blocks` equal blocks of `k_tiles` k-tiles that
// maximizes SplitKScore; a larger factor must win by 2%. Every split keeps
// at least `min_tiles_per_split` k-tiles, and when the blocks fit in one
// wave of `slots`, the splits do too.
int64_t ChooseSplitK(int64_t blocks, int64_t k_tiles, int64_t slots,
                     int64_t min_tiles_per_split, int64_t max_splits,
                     double reduction_bytes_per_split, double stream_bytes);

// Whether the layer can take the wgmma decode kernels (sm_90, N a
// multiple of 64, 16-bit activations).
bool WgmmaDecodeApplies(const GpuTarget& gpu, const QuantSpec& spec,
                        const LayerShape& shape);

// Entries for M 1-8, 9-16, 17-32 and 33-64, a range in two where its tile
// takes early=1 from above its first M (M 1-5 and 6-8). Requires
// WgmmaDecodeApplies.
// layout=kmajor tiles only for launch_abi >= kLaunchAbiKMajorScales (a
// client of an older ABI passes the checkpoint scales); below it the same tiles
// and splits read their scales row-major.
absl::StatusOr<std::vector<PlanEntry>> PlanWgmmaDecode(const QuantSpec& spec,
                                                       const LayerShape& shape,
                                                       int sm_count,
                                                       int smem_limit,
                                                       uint32_t launch_abi);

}  // namespace hummingd
