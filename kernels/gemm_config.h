#pragma once

// Host side of the GEMM family's compile-time tiling: the canonical config
// text the planner writes and codegen reads back
// ("tile=16x64x128,warps=1x4,stages=4" for the mma.sync skeleton,
// "tile=8x128x256,warps=1x8,stages=6,mma=wgmma[,copy=bulk|warprun][,scales=pre]
// [,layout=kmajor][,ksplit=S][,blocks=N][,early=N][,order=grouped]" for the
// Hopper decode skeleton), its
// validation against a layer, and the split-K workspace size.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/plan.h"
#include "kernels/quant_spec.h"

namespace hummingd {

inline constexpr char kGemmSkeleton[] = "wna16";
// sm_90a decode kernels: weights as wgmma's register A operand, the tokens
// (block_m of 8 to 256) as its N, one to four warpgroups (warps 1x4, 1x8 or
// 1x16) of one or two 64-row blocks each.
inline constexpr char kGemmWgmmaSkeleton[] = "wna16_wgmma";
inline constexpr char kRepackSkeleton[] = "repack";
inline constexpr char kGemmEntry[] = "hummingd_gemm";
inline constexpr char kRepackEntry[] = "hummingd_repack";
inline constexpr int kRepackThreads = 256;

// Weight units of the fragment layout (kernels/reference/gemm_layout.h).
inline constexpr int64_t kGemmUnitN = 16;
inline constexpr int64_t kGemmUnitK = 64;

enum class GemmMma : uint8_t {
  kSync = 1,   // mma.sync m16n8k16 (sm_75+), skeleton kGemmSkeleton
  kWgmma = 2,  // wgmma, register A (sm_90a), skeleton kGemmWgmmaSkeleton
};

struct GemmTileConfig {
  int block_m = 16;
  int block_n = 64;
  int block_k = 128;
  int warps_m = 1;
  int warps_n = 4;
  int stages = 4;
  GemmMma mma = GemmMma::kSync;
  // wgmma only: weights by cp.async.bulk (TMA) on per-stage mbarriers
  // instead of per-thread 16-byte cp.async ("copy=bulk").
  bool bulk_weights = false;
  // wgmma only: scales applied to every weight pair (one more packed FMA
  // per pair) instead of to fp32 partial sums once per scale group, which
  // drains the wgmma pipe at every group ("scales=pre"; planned for 8-bit
  // weights at 64 tokens).
  bool prescaled_scales = false;
  // wgmma only: the blocks per SM the kernel is built for, i.e. the register
  // cap of its __launch_bounds__ ("blocks=N", 1..4); 0 takes
  // WgmmaBlocksPerSm's rule. The planner sets it only where the rule
  // differs (16-token tiles at three per SM, planner v12; 8-token
  // 256-column k-tiles at three per SM, planner v13).
  int blocks_per_sm = 0;
  // wgmma only: the scales come as a [column][row] copy the layer prepares
  // (passed as GemmArgs::scales; kernels/k_major_scales.h), one contiguous run
  // per column and block, instead of a window per row of the checkpoint
  // tensor ("layout=kmajor"; one scale per row and no zero points). Planned
  // for 256-row tiles (planner v12) and, for uint4 in groups of 128, long
  // splits of the 16- / 32-token 128-row tiles and 32-token slices (v61).
  bool k_major_scales = false;
  // wgmma only, 8 or 16 tokens (on mma.sync): the block's warps split each
  // k-tile this many ways ("ksplit=S", 2, 4 or 8), each owning one 16-row
  // n-unit, so that block_n = 16 * warps / S and the slices meet in shared
  // memory instead of in split-K partials; such tiles run unsplit. 1: each warp
  // owns its rows' whole k-tile.
  int warp_split_k = 1;
  // 64- to 256-token wgmma tiles only: blocks take their (m-block, n-block)
  // tiles in grouped order (kernels/device/schedule/block_order.cuh), so
  // that a wave of resident blocks of a many-M-block launch shares
  // activations and weights in L2 ("order=grouped"). Planned on the
  // 128-token tiles from M = 513 for clients of launch ABI 3 (planner v29,
  // bench/decode-notes.md v66, v68) and on every 256-token tile (ABI 4,
  // planner v33, v69).
  bool grouped_order = false;
  // wgmma only: the prologue fetches only its first `early_tiles` tiles'
  // weights before the previous kernel completes and the rest of its tiles'
  // weights after, each with its activations ("early=N", 1 <= N < the ring's
  // lead); 0: every prologue tile's weights before (bench/decode-notes.md
  // v82, v83: 2-4% faster on 8192² at 1-16 tokens, 1-7% slower on other
  // layers). The first tile's activations then queue behind fewer weights.
  int early_tiles = 0;
  // wgmma only, cp.async weights: each warp copies consecutive 512-byte
  // pieces of one weight run per stage, so that every thread keeps one
  // pointer and one shared offset instead of one per slot ("copy=warprun";
  // WgmmaTakesWarpRunWeights says where the runs allow it). Fewer address
  // instructions per k-tile; which tiles gain is measured
  // (bench/decode-notes.md v76, v77, v86).
  bool warp_run_weights = false;

  int Threads() const { return 32 * warps_m * warps_n; }
  // Dynamic shared memory of the kernel for this spec (the wgmma skeleton
  // also stages scale and zero-point words).
  int SharedBytes(const QuantSpec& spec) const;
  const char* Skeleton() const {
    return mma == GemmMma::kWgmma ? kGemmWgmmaSkeleton : kGemmSkeleton;
  }
  bool operator==(const GemmTileConfig&) const = default;
};

// Blocks per SM a wgmma decode tile is built for (its register cap and the
// planner's residency): the tile's blocks_per_sm when set, else four for
// 256-thread tiles of 128 columns with at most 4 accumulators per thread and
// 4 stages (8 tokens, 128 rows: 64 registers); two while a thread's fp32
// accumulators (row blocks per warpgroup x tokens / 2) fit half the register
// file — at most 32 for 256 threads, 4 for 512 — else one.
int WgmmaBlocksPerSm(const GemmTileConfig& tile);

// The wgmma tile of two warpgroups, each one 64-row block (128 rows) by all
// `tokens` tokens, `block_k` columns in `stages` stages: the decode
// planner's 128-row tiles and the prefill planner's 128- and 256-token ones.
GemmTileConfig WgmmaTwoWarpgroupTile(int tokens, int block_k, int stages);

// sm_90 shared memory: 228 KB per SM, 1 KB of it reserved per block, and
// allocated per block in units of 128 bytes.
inline constexpr int kSm90SharedBytesPerSm = 228 * 1024;
inline constexpr int kSm90ReservedSharedPerBlock = 1024;
inline constexpr int kSm90SharedAllocationUnit = 128;

// The most static shared memory a GEMM kernel has besides the driver's
// reservation: the split-K epilogue's last-block flag
// (device/epilogue/gemm_epilogue.cuh), 4 bytes in a 16-byte-aligned section;
// k-split warp tiles (ksplit=S), which run unsplit, have none. A block takes
// it on top of its dynamic bytes, so the fitting budgets below leave it out:
// without it, tiles sized to two blocks per SM "to the byte" ran one per SM,
// 1.1-1.4x slower (decode-notes v128). GemmCompileTest checks every kernel's
// cubin against it.
inline constexpr int kGemmStaticSharedBytes = 16;

// Blocks that fit on one sm_90 SM at once, counted as the driver does
// (cuda_occupancy.h): 64 Ki registers allocated per warp in units of 256 (8
// per thread); 228 KB of shared memory, each block taking its dynamic bytes,
// its kernel's static bytes (by default the most a GEMM kernel has,
// kGemmStaticSharedBytes above) and the 1 KB the driver reserves per block,
// rounded up to 128 bytes; 2048 threads; 32 blocks. A decode kernel that
// fits more blocks than WgmmaBlocksPerSm plans packs its one-wave grid onto
// fewer SMs (bench/decode-notes.md v40).
int Sm90ResidentBlocks(int threads, int registers_per_thread,
                       int dynamic_shared_bytes,
                       int static_shared_bytes = kGemmStaticSharedBytes);

// Shared memory per block, reservation and static bytes included, at which
// `blocks` blocks fit on an sm_90 SM: whole allocation units.
constexpr int Sm90BlockSharedBytes(int blocks) {
  const int per_block = kSm90SharedBytesPerSm / blocks;
  return per_block - per_block % kSm90SharedAllocationUnit;
}

// The most dynamic shared memory per block at which `blocks` blocks still
// fit on an sm_90 SM, whatever the GEMM kernel's static bytes.
constexpr int Sm90SharedBytesForAtLeast(int blocks) {
  return Sm90BlockSharedBytes(blocks) - kSm90ReservedSharedPerBlock -
         kGemmStaticSharedBytes;
}

// The least dynamic shared memory per block at which no more than `blocks`
// (< 32, the block limit) fit on an sm_90 SM, whatever the GEMM kernel's
// static bytes: a kernel without any must not fit one more either.
constexpr int Sm90SharedBytesForAtMost(int blocks) {
  return Sm90BlockSharedBytes(blocks + 1) - kSm90ReservedSharedPerBlock + 1;
}

// Whether each k-split warp's slice of `tile` (BK / ksplit columns) holds
// whole scale periods of `spec` on a layer of K columns (a period: the
// scale group along K, or the slice where the group is wider), as the
// kernel's static_assert asks of every ksplit tile (wgmma_tile_compute.cuh,
// WgmmaScalePlan); always true without ksplit.
bool WgmmaKSplitHoldsScalePeriods(const GemmTileConfig& tile,
                                  const QuantSpec& spec, int64_t k);

// Whether `tile` with layout=kmajor compiles for `spec` on a layer of K
// columns: wgmma_config.cuh's static_assert on the host (one scale per row
// and no zero points, KMajorScaleSourceOf; the chunk's columns of BN
// elements fit the space of its row windows; BN elements a whole number of
// 16-byte pieces), so that the planner never emits a tile the kernel
// refuses.
bool WgmmaTakesKMajorScales(const GemmTileConfig& tile, const QuantSpec& spec,
                            int64_t k);

// Whether `tile` with copy=warprun compiles for `spec`: cp.async weights
// whose runs (one per 16-row n-unit) hold whole warps' shares of the
// stage's chunks, memory/wgmma_tiles.cuh's static_assert on the host.
bool WgmmaTakesWarpRunWeights(const GemmTileConfig& tile,
                              const QuantSpec& spec);

// WgmmaConfig's kLongScaleChunks (gemm/wgmma_config.cuh) on the host:
// whether the tile's scale chunks span up to eight k-tiles (slice-ring tiles
// at up to two blocks per SM), which sizes its shared memory.
bool WgmmaLongScaleChunks(const GemmTileConfig& tile, const QuantSpec& spec);

std::string FormatGemmTileText(const GemmTileConfig& tile);
// Strict inverse of FormatGemmTileText; INVALID_ARGUMENT naming
// "config.text" for anything else.
absl::StatusOr<GemmTileConfig> ParseGemmTileText(std::string_view text);

// The oldest launch ABI (kernels/launch_abi.h) whose clients can launch
// `tile`: what its text and arguments ask of the client.
uint32_t GemmTileLaunchAbi(const GemmTileConfig& tile);

// N and K are positive multiples of the weight unit (16 x 64):
// INVALID_ARGUMENT naming "shape" otherwise. The planner and codegen both
// hold every GEMM layer to it.
absl::Status CheckGemmUnits(int64_t n, int64_t k);

// The tile fits the layer and the device rules (N % BN, K % BK, BK % 64,
// warp tiles of whole m16 x n16 fragments, <= 1024 threads, stages 2..8;
// for wgmma: block_m 8/16/32/64/128/256, warps 1x4, 1x8 or 1x16, BN a
// multiple of 64 per warpgroup, stages 3..12).
absl::Status ValidateGemmTile(const GemmTileConfig& tile, int64_t n, int64_t k);

// Split-K buffers per block along x (0 when splits <= 1); the device uses
// the same layout (kernels/device/schedule/split_k.cuh): fp32 partials,
// and u32 arrival counters (one per (m16, n16) tile origin).
int64_t GemmWorkspaceBytesPerMBlock(const GemmTileConfig& tile, int64_t n,
                                    int64_t splits);
int64_t GemmCounterBytesPerMBlock(const GemmTileConfig& tile, int64_t n,
                                  int64_t splits);

// What a launch of `entry` for `m` tokens needs (0 without split-K). The
// counters must be zeroed once at allocation; every launch leaves them
// zeroed. One counter buffer of the largest GemmCounterBytes(entry,
// min(M_max, entry.m_max)) over a plan's entries serves every entry of the
// plan and every m <= M_max (any layer of the same or smaller N).
int64_t GemmWorkspaceBytes(const PlanEntry& entry, int64_t m);
int64_t GemmCounterBytes(const PlanEntry& entry, int64_t m);

}  // namespace hummingd
