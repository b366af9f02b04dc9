#pragma once

// Compile-time description of one WNA16 GEMM kernel: the weight format
// (GemmFormat), the tiling (GemmTile) and the layer's N and K. Instantiated
// by a generated stub from closed enums and integers only.

#include "arch/platform.cuh"
#include "numeric/formats.cuh"
#include "numeric/weight_decode.cuh"
#include "pack/gemm_layout.cuh"

namespace hummingd::device {

// kScaleBlockN/K as in DequantConfig: group -> (1, group), block ->
// (block_n, block_k), channel / tensor -> unused. kActivationType is the
// mma operand type (and the dtype of float zero points); bias is stored in
// kOutputType.
template <CodeKind kKind_, int kBits_, int kExponentBits_, int kMantissaBits_,
          ScaleLayout kScaleLayout_, int kScaleBlockN_, int kScaleBlockK_,
          ScalarType kScaleType_, ZeroKind kZero_, SecondaryKind kSecondary_,
          ScalarType kActivationType_, ScalarType kOutputType_, bool kHasBias_>
struct GemmFormat {
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
  static constexpr bool kHasBias = kHasBias_;
  using Decoder = WeightDecoder<kKind_, kBits_, kExponentBits_, kMantissaBits_,
                                kZero_, kActivationType_>;
  static_assert(kActivationType == ScalarType::kFp16 ||
                    kActivationType == ScalarType::kBf16,
                "WNA16 activations are fp16 or bf16");
  static_assert(kOutputType == ScalarType::kFp16 ||
                    kOutputType == ScalarType::kBf16,
                "outputs are fp16 or bf16");
};

// Block tile kBlockM x kBlockN x kBlockK, warps kWarpsM x kWarpsN (each
// warp owns a (kBlockM / kWarpsM) x (kBlockN / kWarpsN) output tile),
// kStages shared-memory stages.
template <int kBlockM_, int kBlockN_, int kBlockK_, int kWarpsM_, int kWarpsN_,
          int kStages_>
struct GemmTile {
  static constexpr int kBlockM = kBlockM_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kBlockK = kBlockK_;
  static constexpr int kWarpsM = kWarpsM_;
  static constexpr int kWarpsN = kWarpsN_;
  static constexpr int kStages = kStages_;
};

// The scale tiling (numeric/formats.cuh) of a GemmFormat's N x K weights.
template <class Format, i64 kN, i64 kK>
using GemmScaleTiling = ScaleTiling<Format::kScaleLayout, Format::kScaleBlockN,
                                    Format::kScaleBlockK, kN, kK>;

template <class Format_, class Tile_, i64 kN_, i64 kK_>
struct Wna16Config : GemmScaleTiling<Format_, kN_, kK_> {
  using Format = Format_;
  using Tile = Tile_;
  static constexpr i64 kN = kN_;
  static constexpr i64 kK = kK_;
  static constexpr int kBits = Format::kBits;
  static constexpr int kThreads = 32 * Tile::kWarpsM * Tile::kWarpsN;
  static constexpr int kWarpM = Tile::kBlockM / Tile::kWarpsM;
  static constexpr int kWarpN = Tile::kBlockN / Tile::kWarpsN;
  static constexpr int kMFragments = kWarpM / 16;         // m16 tiles
  static constexpr int kUnitsN = kWarpN / kGemmUnitRows;  // per warp
  static constexpr int kNFragments = 2 * kUnitsN;         // n8 tiles
  static constexpr int kUnitsKPerTile = Tile::kBlockK / kGemmUnitCols;
  static constexpr int kKTiles = static_cast<int>(kK / Tile::kBlockK);
  static constexpr i64 kUnitsKPerRow = kK / kGemmUnitCols;
  static constexpr int kUnitWords = 32 * kBits;
  // Shared memory of one stage: the activation tile (kBlockM rows of
  // kBlockK 16-bit values) then the weight units of the block tile.
  static constexpr int kStageABytes = Tile::kBlockM * Tile::kBlockK * 2;
  static constexpr int kStageWBytes =
      (Tile::kBlockN / kGemmUnitRows) * kUnitsKPerTile * kUnitWords * 4;
  static constexpr int kStageBytes = kStageABytes + kStageWBytes;
  static constexpr int kSharedBytes = Tile::kStages * kStageBytes;
  static constexpr int kAccumulators = kMFragments * kNFragments * 4;
  using Scales = GemmScaleTiling<Format_, kN_, kK_>;
  using Scales::kScaleColumns;
  using Scales::kScaleTileK;
  using Scales::kScaleTileN;

  static_assert(kN % Tile::kBlockN == 0 && kK % Tile::kBlockK == 0,
                "N and K must be multiples of the block tile");
  static_assert(Tile::kBlockK % kGemmUnitCols == 0 &&
                    (Tile::kBlockK / 8) % 8 == 0,
                "BK must be a multiple of 64");
  static_assert(kWarpM % 16 == 0 && kWarpN % kGemmUnitRows == 0,
                "warp tiles are whole m16 x n16 fragments");
  static_assert(kScaleTileK % 16 == 0, "a k16 step lies in one scale entry");
  static_assert(kScaleTileN > 0 && kN % kScaleTileN == 0,
                "N must be a multiple of the scale tile");
  static_assert(Tile::kStages >= 2, "at least double buffering");
};

}  // namespace hummingd::device
