#include "kernels/gemm_config.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gemm/wgmma_config.cuh"
#include "kernels/k_major_scales.h"
#include "kernels/launch_abi.h"
#include "memory/wgmma_tiles.cuh"

namespace hummingd {
namespace {

absl::Status Invalid(const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat("config.text: ", message));
}

// Every number of a tile text is far below this (block sizes <= 1024, warps
// <= 16, stages <= 8): the bound keeps the validation's products (16 *
// warps, block_n * ksplit, threads) inside int for any text, since tile
// texts also arrive from tools (sweep files) and from a daemon.
constexpr int kMaxTileTextNumber = 4096;

// "AxB[xC]" with exactly `count` integers in [1, kMaxTileTextNumber].
bool ParseDims(absl::string_view text, int count, int* out) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, 'x');
  if (static_cast<int>(parts.size()) != count) return false;
  for (int i = 0; i < count; ++i) {
    if (!absl::SimpleAtoi(parts[i], &out[i]) || out[i] <= 0 ||
        out[i] > kMaxTileTextNumber || absl::StrCat(out[i]) != parts[i]) {
      return false;
    }
  }
  return true;
}

// Columns of one scale entry along K (GemmScaleTiling's kScaleTileK):
// `whole_k` for channel and tensor scales.
int64_t ScaleTileK(const QuantSpec& spec, int64_t whole_k) {
  if (spec.granularity == ScaleGranularity::kGroup) return spec.group_size;
  if (spec.granularity == ScaleGranularity::kBlock) return spec.block_k;
  return whole_k;
}

}  // namespace

bool WgmmaLongScaleChunks(const GemmTileConfig& tile, const QuantSpec& spec) {
  return tile.mma == GemmMma::kWgmma &&
         device::wgmma_long_scale_chunks(
             device::wgmma_slice_rings(tile.Threads(), tile.block_n,
                                       tile.block_k, spec.weight.bits,
                                       tile.warp_split_k, tile.bulk_weights),
             WgmmaBlocksPerSm(tile), tile.block_n, spec.weight.bits,
             tile.stages);
}

int GemmTileConfig::SharedBytes(const QuantSpec& spec) const {
  const int bits = spec.weight.bits;
  if (mma == GemmMma::kWgmma) {
    // The kernel's own formula (kernels/device/gemm/wgmma_config.cuh).
    // Channel / tensor scales: one entry per k-tile, whatever K is.
    const int64_t scale_tile_k = ScaleTileK(spec, INT64_MAX);
    // Integer zero points are uint8 codes, float ones activation-typed.
    const int zero_bytes = spec.zero_point == ZeroPointKind::kNone ? 0
                           : spec.zero_point == ZeroPointKind::kInteger
                               ? 1
                               : DataTypeBytes(spec.activation_type);
    const int chunk = device::wgmma_chunk_bytes(
        device::wgmma_ring_lead(stages, warp_split_k), block_n,
        device::wgmma_scale_entries(scale_tile_k, block_k),
        DataTypeBytes(spec.scale_type), zero_bytes,
        WgmmaLongScaleChunks(*this, spec));
    return device::wgmma_shared_bytes(
        stages, device::wgmma_stage_bytes(block_m, block_n, block_k, bits),
        chunk);
  }
  const int a_bytes = block_m * block_k * 2;
  const int w_bytes = static_cast<int>(block_n / kGemmUnitN) *
                      static_cast<int>(block_k / kGemmUnitK) * 128 * bits;
  return stages * (a_bytes + w_bytes);
}

uint32_t GemmTileLaunchAbi(const GemmTileConfig& tile) {
  if (tile.warp_run_weights) return kLaunchAbiWarpRunWeights;
  if (tile.early_tiles > 0) return kLaunchAbiEarlyTiles;
  if (tile.mma == GemmMma::kWgmma && tile.block_m > 128) {
    return kLaunchAbiTokenTiles256;
  }
  if ((tile.mma == GemmMma::kWgmma && tile.block_m > 64) ||
      tile.grouped_order) {
    return kLaunchAbiPrefillTiles;
  }
  if (tile.warp_split_k > 1) return kLaunchAbiKSplitTiles;
  if (tile.k_major_scales) return kLaunchAbiKMajorScales;
  return kLaunchAbiOriginal;
}

GemmTileConfig WgmmaTwoWarpgroupTile(int tokens, int block_k, int stages) {
  GemmTileConfig tile;
  tile.mma = GemmMma::kWgmma;
  tile.block_m = tokens;
  tile.warps_m = 1;
  tile.warps_n = 8;
  tile.block_n = 128;
  tile.block_k = block_k;
  tile.stages = stages;
  return tile;
}

int WgmmaBlocksPerSm(const GemmTileConfig& tile) {
  if (tile.blocks_per_sm > 0) return tile.blocks_per_sm;
  const int warpgroups = std::max(1, tile.warps_n / 4);
  const int row_blocks = std::max(1, tile.block_n / (64 * warpgroups));
  const int accumulators = row_blocks * tile.block_m / 2;
  // Two blocks cap a thread at 65536 / (2 x threads) registers: 128 for
  // 256 threads (enough up to 32 accumulators), 64 for 512 (enough for 4:
  // the 8-token tile took 54 registers, the 16-token one spilled).
  // 8-token 128-row tiles of 128 columns and at most 4 stages in 256
  // threads run four (64 registers each; the planner's choice for layers
  // that need many short splits, measured with 4-bit weights).
  if (tile.Threads() == 256 && tile.block_k == 128 && accumulators <= 4 &&
      tile.stages <= 4) {
    return 4;
  }
  if (tile.Threads() <= 256) return accumulators <= 32 ? 2 : 1;
  return accumulators <= 4 ? 2 : 1;
}

int Sm90ResidentBlocks(int threads, int registers_per_thread,
                       int dynamic_shared_bytes, int static_shared_bytes) {
  constexpr int kRegisters = 64 * 1024;
  constexpr int kThreads = 2048;
  constexpr int kBlocks = 32;
  const int allocated = (registers_per_thread + 7) / 8 * 8;
  const int by_registers = kRegisters / std::max(1, allocated * threads);
  const int block_bytes =
      dynamic_shared_bytes + static_shared_bytes + kSm90ReservedSharedPerBlock;
  const int allocated_bytes = (block_bytes + kSm90SharedAllocationUnit - 1) /
                              kSm90SharedAllocationUnit *
                              kSm90SharedAllocationUnit;
  const int by_shared = kSm90SharedBytesPerSm / allocated_bytes;
  const int by_threads = kThreads / std::max(1, threads);
  return std::min({by_registers, by_shared, by_threads, kBlocks});
}

bool WgmmaKSplitHoldsScalePeriods(const GemmTileConfig& tile,
                                  const QuantSpec& spec, int64_t k) {
  if (tile.warp_split_k <= 1) return true;
  const int64_t slice = tile.block_k / tile.warp_split_k;
  const int64_t period = std::min(ScaleTileK(spec, k), slice);
  return period > 0 && slice % period == 0;
}

bool WgmmaTakesKMajorScales(const GemmTileConfig& tile, const QuantSpec& spec,
                            int64_t k) {
  if (tile.mma != GemmMma::kWgmma ||
      KMajorScaleSourceOf(spec) == KMajorScaleSource::kNone) {
    return false;
  }
  // WgmmaConfig's kChunkTiles, kScaleWindowWords and kChunkCols.
  const int64_t scale_tile_k = ScaleTileK(spec, k);
  const int entries = device::wgmma_scale_entries(scale_tile_k, tile.block_k);
  const int element_bytes = DataTypeBytes(spec.scale_type);
  const int chunk_tiles = device::wgmma_scale_chunk_tiles(
      device::wgmma_ring_lead(tile.stages, tile.warp_split_k), entries,
      element_bytes, WgmmaLongScaleChunks(tile, spec));
  const int window_words =
      device::wgmma_chunk_window_words(chunk_tiles, entries, element_bytes);
  const int64_t chunk_cols = device::wgmma_k_major_chunk_cols(
      chunk_tiles, entries, tile.block_k, scale_tile_k);
  const int64_t column_bytes = int64_t{tile.block_n} * element_bytes;
  return chunk_cols * column_bytes <=
             int64_t{tile.block_n} * window_words * 16 &&
         column_bytes % 16 == 0;
}

bool WgmmaTakesWarpRunWeights(const GemmTileConfig& tile,
                              const QuantSpec& spec) {
  return tile.mma == GemmMma::kWgmma && !tile.bulk_weights &&
         device::wgmma_warp_run_weights_fit(tile.Threads(), tile.block_n,
                                            tile.block_k, spec.weight.bits);
}

std::string FormatGemmTileText(const GemmTileConfig& tile) {
  return absl::StrCat(
      "tile=", tile.block_m, "x", tile.block_n, "x", tile.block_k,
      ",warps=", tile.warps_m, "x", tile.warps_n, ",stages=", tile.stages,
      tile.mma == GemmMma::kWgmma ? ",mma=wgmma" : "",
      tile.bulk_weights ? ",copy=bulk" : "",
      tile.warp_run_weights ? ",copy=warprun" : "",
      tile.prescaled_scales ? ",scales=pre" : "",
      tile.k_major_scales ? ",layout=kmajor" : "",
      tile.warp_split_k > 1 ? absl::StrCat(",ksplit=", tile.warp_split_k) : "",
      tile.blocks_per_sm > 0 ? absl::StrCat(",blocks=", tile.blocks_per_sm)
                             : "",
      tile.early_tiles > 0 ? absl::StrCat(",early=", tile.early_tiles) : "",
      tile.grouped_order ? ",order=grouped" : "");
}

absl::StatusOr<GemmTileConfig> ParseGemmTileText(std::string_view text) {
  const absl::string_view whole(text.data(), text.size());
  const std::vector<absl::string_view> fields = absl::StrSplit(whole, ',');
  // The options after stages=, each at most once and in this order.
  size_t next = 3;
  auto take = [&](absl::string_view option) {
    if (next < fields.size() && fields[next] == option) {
      ++next;
      return true;
    }
    return false;
  };
  GemmTileConfig tile;
  const bool has_mma = take("mma=wgmma");
  bool numbers_ok = true;
  if (has_mma) {  // the rest are wgmma options
    tile.bulk_weights = take("copy=bulk");
    tile.warp_run_weights = !tile.bulk_weights && take("copy=warprun");
    tile.prescaled_scales = take("scales=pre");
    tile.k_major_scales = take("layout=kmajor");
    if (next < fields.size() && absl::StartsWith(fields[next], "ksplit=")) {
      int split[1];
      numbers_ok = ParseDims(fields[next].substr(7), 1, split) &&
                   (split[0] == 2 || split[0] == 4 || split[0] == 8);
      tile.warp_split_k = numbers_ok ? split[0] : 1;
      ++next;
    }
    if (numbers_ok && next < fields.size() &&
        absl::StartsWith(fields[next], "blocks=")) {
      int blocks[1];
      numbers_ok = ParseDims(fields[next].substr(7), 1, blocks) &&
                   blocks[0] >= 1 && blocks[0] <= 4;
      tile.blocks_per_sm = numbers_ok ? blocks[0] : 0;
      ++next;
    }
    if (numbers_ok && next < fields.size() &&
        absl::StartsWith(fields[next], "early=")) {
      int early[1];
      // ValidateGemmTile checks it against the ring's lead.
      numbers_ok = ParseDims(fields[next].substr(6), 1, early);
      tile.early_tiles = numbers_ok ? early[0] : 0;
      ++next;
    }
    if (numbers_ok) tile.grouped_order = take("order=grouped");
  }
  if (fields.size() < 3 || next != fields.size() || !numbers_ok ||
      !absl::StartsWith(fields[0], "tile=") ||
      !absl::StartsWith(fields[1], "warps=") ||
      !absl::StartsWith(fields[2], "stages=")) {
    return Invalid(absl::StrCat(
        "expected tile=BMxBNxBK,warps=WMxWN,stages=S[,mma=wgmma[,copy=bulk|"
        "warprun][,scales=pre][,layout=kmajor][,ksplit=2|4|8][,blocks=1..4]"
        "[,early=N][,order=grouped]] (got '",
        whole, "')"));
  }
  int dims[3];
  if (!ParseDims(fields[0].substr(5), 3, dims)) return Invalid("bad tile=");
  tile.block_m = dims[0];
  tile.block_n = dims[1];
  tile.block_k = dims[2];
  if (!ParseDims(fields[1].substr(6), 2, dims)) return Invalid("bad warps=");
  tile.warps_m = dims[0];
  tile.warps_n = dims[1];
  if (!ParseDims(fields[2].substr(7), 1, dims)) return Invalid("bad stages=");
  tile.stages = dims[0];
  tile.mma = has_mma ? GemmMma::kWgmma : GemmMma::kSync;
  return tile;
}

absl::Status CheckGemmUnits(int64_t n, int64_t k) {
  if (n <= 0 || k <= 0 || n % kGemmUnitN != 0 || k % kGemmUnitK != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape: the gemm family needs N a positive multiple of ",
                     kGemmUnitN, " and K a positive multiple of ", kGemmUnitK,
                     " (got N=", n, ", K=", k, ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateGemmTile(const GemmTileConfig& tile, int64_t n,
                              int64_t k) {
  // k-split warps each take at most 256 columns of a tile.
  if (tile.block_k % kGemmUnitK != 0 ||
      tile.block_k > 256 * std::max(1, tile.warp_split_k)) {
    return Invalid(absl::StrCat(
        "BK must be 64, 128, 192 or 256 (with ksplit=S, up to 256 per warp's "
        "slice; got ",
        tile.block_k, ")"));
  }
  if (tile.warp_split_k != 1) {
    const bool warpgroup_slices = device::wgmma_warpgroup_slices(
        tile.block_m, tile.block_n, tile.warp_split_k);
    if (tile.mma != GemmMma::kWgmma ||
        (tile.block_m != 8 && tile.block_m != 16 && !warpgroup_slices) ||
        tile.warps_m != 1 ||
        (tile.warps_n != 4 && tile.warps_n != 8 && tile.warps_n != 16) ||
        (tile.warp_split_k != 2 && tile.warp_split_k != 4 &&
         tile.warp_split_k != 8) ||
        tile.warps_n % tile.warp_split_k != 0 ||
        tile.block_n * tile.warp_split_k != 16 * tile.warps_n ||
        (tile.block_k / kGemmUnitK) % tile.warp_split_k != 0 ||
        tile.bulk_weights) {
      return Invalid(absl::StrCat(
          "ksplit=S is an 8- or 16-token wgmma tile option (BN = 64 at 16 "
          "or 32 tokens: slices of whole warpgroups on wgmma, S = warps / "
          "4): S of 2, 4 or 8 warps per 16-row n-unit (BN = 16 * warps / "
          "S), whole 64-column units per slice, cp.async weights (tile ",
          tile.block_m, "x", tile.block_n, "x", tile.block_k, ", warps ",
          tile.warps_m, "x", tile.warps_n, ", ksplit=", tile.warp_split_k,
          ")"));
    }
    if (tile.stages < 3 || tile.stages > 12) {
      return Invalid(absl::StrCat("wgmma tiles take 3..12 stages (got ",
                                  tile.stages, ")"));
    }
    if (warpgroup_slices && tile.stages < 4) {
      // Their wgmmas may read tile t - 1's slot past the tile's barrier.
      return Invalid(absl::StrCat(
          "ksplit=S slices of whole warpgroups (BN = 64 at 16 or 32 tokens) "
          "take 4..12 stages (got ",
          tile.stages, ")"));
    }
  } else if (tile.mma == GemmMma::kWgmma) {
    const int warpgroups = tile.warps_n / 4;
    if ((tile.block_m != 8 && tile.block_m != 16 && tile.block_m != 32 &&
         tile.block_m != 64 && tile.block_m != 128 && tile.block_m != 256) ||
        tile.warps_m != 1 ||
        (tile.warps_n != 4 && tile.warps_n != 8 && tile.warps_n != 16) ||
        tile.block_n % (64 * warpgroups) != 0 ||
        tile.block_n / (64 * warpgroups) > 2) {
      return Invalid(absl::StrCat(
          "wgmma tiles take BM 8, 16, 32, 64, 128 or 256, warps 1x4, 1x8 or "
          "1x16 and one or two 64-row blocks per warpgroup (tile ",
          tile.block_m, "x", tile.block_n, ", warps ", tile.warps_m, "x",
          tile.warps_n, ")"));
    }
    if (tile.stages < 3 || tile.stages > 12) {
      return Invalid(absl::StrCat("wgmma tiles take 3..12 stages (got ",
                                  tile.stages, ")"));
    }
    // 64 (128 tokens) or 128 (256 tokens) fp32 accumulators per thread and
    // row block: one of them, and at most two warpgroups (sixteen warps
    // spill under their 128-register cap).
    if (tile.block_m >= 128 &&
        (tile.block_n != 64 * warpgroups || warpgroups > 2)) {
      return Invalid(absl::StrCat(
          "128- and 256-token wgmma tiles take one 64-row block per "
          "warpgroup and at most 8 warps (tile ",
          tile.block_m, "x", tile.block_n, ", warps ", tile.warps_m, "x",
          tile.warps_n, ")"));
    }
  } else if (tile.block_m % (16 * tile.warps_m) != 0 ||
             tile.block_n % (16 * tile.warps_n) != 0) {
    return Invalid(absl::StrCat(
        "warp tiles must be whole m16 x n16 fragments (tile ", tile.block_m,
        "x", tile.block_n, ", warps ", tile.warps_m, "x", tile.warps_n, ")"));
  }
  if (tile.Threads() > 1024 || tile.block_m > 256) {
    return Invalid("at most 32 warps and BM <= 256");
  }
  if (tile.bulk_weights && tile.mma != GemmMma::kWgmma) {
    return Invalid("copy=bulk is a wgmma tile option");
  }
  if (tile.warp_run_weights &&
      (tile.mma != GemmMma::kWgmma || tile.bulk_weights)) {
    return Invalid(
        "copy=warprun is a wgmma tile option of cp.async weights (not "
        "copy=bulk)");
  }
  if (tile.prescaled_scales && tile.mma != GemmMma::kWgmma) {
    return Invalid("scales=pre is a wgmma tile option");
  }
  if (tile.k_major_scales && tile.mma != GemmMma::kWgmma) {
    return Invalid("layout=kmajor is a wgmma tile option");
  }
  // The 64- to 256-token tiles alone serve many M-blocks; their grids
  // (M <= 2^20: at most 16384 x N / 64 blocks) keep the remap's 32-bit
  // block index exact.
  if (tile.grouped_order &&
      (tile.mma != GemmMma::kWgmma || tile.block_m < 64)) {
    return Invalid(
        "order=grouped is an option of 64- to 256-token wgmma tiles");
  }
  if (tile.blocks_per_sm != 0 &&
      (tile.mma != GemmMma::kWgmma || tile.blocks_per_sm < 1 ||
       tile.blocks_per_sm > 4)) {
    return Invalid("blocks=1..4 is a wgmma tile option");
  }
  // early=N names fewer prologue tiles than the ring's lead (all of them is
  // the default, written without the option).
  if (tile.early_tiles != 0 && tile.mma != GemmMma::kWgmma) {
    return Invalid("early=N is a wgmma tile option");
  }
  if (tile.early_tiles != 0 &&
      (tile.early_tiles < 1 ||
       tile.early_tiles >=
           device::wgmma_ring_lead(tile.stages, tile.warp_split_k))) {
    return Invalid(absl::StrCat(
        "early=N takes 1 <= N < the ring's lead (",
        device::wgmma_ring_lead(tile.stages, tile.warp_split_k),
        " for stages=", tile.stages,
        tile.warp_split_k > 1 ? absl::StrCat(",ksplit=", tile.warp_split_k)
                              : "",
        "; got ", tile.early_tiles, ")"));
  }
  if (tile.mma == GemmMma::kSync && (tile.stages < 2 || tile.stages > 8)) {
    return Invalid(absl::StrCat("stages must be 2..8 (got ", tile.stages, ")"));
  }
  if (n % tile.block_n != 0 || k % tile.block_k != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape: N=", n, ", K=", k, " must be multiples of the block tile (BN=",
        tile.block_n, ", BK=", tile.block_k, ")"));
  }
  return absl::OkStatus();
}

int64_t GemmWorkspaceBytesPerMBlock(const GemmTileConfig& tile, int64_t n,
                                    int64_t splits) {
  if (splits <= 1) return 0;
  return splits * (n / tile.block_n) * tile.block_m * tile.block_n * 4;
}

int64_t GemmCounterBytesPerMBlock(const GemmTileConfig& tile, int64_t n,
                                  int64_t splits) {
  if (splits <= 1) return 0;
  return ((tile.block_m + 15) / 16) * (n / 16) * 4;
}

namespace {
int64_t BlocksX(const LaunchParams& launch, int64_t m) {
  return launch.m_per_block_x > 0
             ? launch.grid_x *
                   ((m + launch.m_per_block_x - 1) / launch.m_per_block_x)
             : launch.grid_x;
}
}  // namespace

int64_t GemmWorkspaceBytes(const PlanEntry& entry, int64_t m) {
  return BlocksX(entry.launch, m) * entry.launch.workspace_bytes_per_m_block;
}

int64_t GemmCounterBytes(const PlanEntry& entry, int64_t m) {
  return BlocksX(entry.launch, m) * entry.launch.counter_bytes_per_m_block;
}

}  // namespace hummingd
