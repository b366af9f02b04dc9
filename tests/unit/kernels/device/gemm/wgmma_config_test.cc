// The wgmma decode kernel's shared-memory layout (gemm/wgmma_config.cuh),
// compiled by the host compiler: the planner's GemmTileConfig::SharedBytes
// (the launch's dynamic shared memory) must equal the bytes the kernel lays
// out, for every scale dtype, granularity and zero-point kind, and a scale
// chunk's window must hold every element the chunk's tiles read.

#include "gemm/wgmma_config.cuh"

#include <string>

#include "gtest/gtest.h"
#include "kernels/gemm_config.h"
#include "kernels/quant_spec.h"
#include "memory/wgmma_tiles.cuh"

namespace hummingd {
namespace {

namespace hd = device;
using CK = hd::CodeKind;
using SL = hd::ScaleLayout;
using ST = hd::ScalarType;
using ZK = hd::ZeroKind;
using SK = hd::SecondaryKind;

template <class Config>
void ExpectHostAgrees(const std::string& spec_text,
                      const std::string& tile_text) {
  SCOPED_TRACE(spec_text + " " + tile_text);
  absl::StatusOr<QuantSpec> spec = ParseSpecText(spec_text);
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(tile_text);
  ASSERT_TRUE(tile.ok()) << tile.status();
  EXPECT_EQ(tile->SharedBytes(Canonicalize(*spec)), Config::kSharedBytes);
  EXPECT_GE(Config::kChunkTiles, Config::kAhead);
}

// Every (row, k-tile of the chunk) element lies inside the row's window of
// the chunk and inside the tensor (so inside the clamped copy), for every
// chunk start of a split and every row of the first 256; the copier's
// 32-bit window words (row part once per thread, then one add and a mask
// per chunk) are the 64-bit ones; and the k-loop's element column (the
// warp's k-slice's column once per tile, plus a compile-time offset) is
// the element's.
template <class Config, int kElementBytes, int kWords>
void ExpectWindowsHoldTheirChunks() {
  constexpr int kBlockK = Config::Tile::kBlockK;
  constexpr long long kTensorBytes = (Config::kN / Config::kScaleTileN) *
                                     Config::kScaleColumns * kElementBytes;
  for (int first_tile = 0; first_tile < Config::kKTiles; ++first_tile) {
    const long long first_col =
        hd::wgmma_chunk_first_column<Config>(first_tile);
    for (long long row = 0; row < 256 && row < Config::kN; ++row) {
      const long long base =
          hd::wgmma_window_base<Config, kElementBytes>(row, first_col);
      ASSERT_EQ(base % 16, 0);
      for (int word = 0; word < kWords; ++word) {
        const auto row_bytes =
            hd::wgmma_window_row_bytes<Config, kElementBytes, hd::u32>(row,
                                                                       word);
        ASSERT_EQ(hd::wgmma_window_word<kElementBytes>(
                      row_bytes, static_cast<int>(first_col)),
                  static_cast<hd::u32>(base + 16 * word))
            << "row " << row << " word " << word;
      }
      const long long row_entry =
          (row / Config::kScaleTileN) * Config::kScaleColumns;
      for (int t = first_tile;
           t < first_tile + Config::kChunkTiles && t < Config::kKTiles; ++t) {
        for (int k = 0; k < kBlockK; k += 16) {
          const long long byte =
              (row_entry + (static_cast<long long>(t) * kBlockK + k) /
                               Config::kScaleTileK) *
              kElementBytes;
          ASSERT_GE(byte, base);
          ASSERT_LE(byte + kElementBytes, kTensorBytes);
          ASSERT_LE(byte + kElementBytes, base + 16 * kWords)
              << "row " << row << " chunk at tile " << first_tile << " tile "
              << t << " column " << k;
          // The kernel's address of the element: the row's lead in the
          // window plus the entry columns past the chunk's first.
          const long long col =
              (static_cast<long long>(t) * kBlockK + k) / Config::kScaleTileK;
          const long long lead =
              hd::wgmma_window_lead<Config, kElementBytes>(row, first_col);
          ASSERT_EQ(byte - base, lead + (col - first_col) * kElementBytes)
              << "row " << row << " chunk at tile " << first_tile << " tile "
              << t << " column " << k;
          constexpr int kSliceCols = Config::kUnitsKPerWarp * hd::kGemmUnitCols;
          const int slice = k / kSliceCols;
          const int d = k % kSliceCols;
          ASSERT_EQ(hd::wgmma_warp_scale_column<Config>(
                        t * kBlockK, slice, static_cast<int>(first_col)) +
                        d / static_cast<int>(Config::kScaleTileK),
                    col - first_col)
              << "tile " << t << " slice " << slice << " column " << d;
        }
      }
    }
  }
}

template <class Config>
void ExpectCapAndTilesPerPass(int register_cap, int tiles_per_pass) {
  EXPECT_EQ(Config::kRegisterCap, register_cap);
  EXPECT_EQ(Config::kTilesPerPass, tiles_per_pass);
}

TEST(WgmmaConfigTest, HostSharedBytesMatchTheKernelLayout) {
  using W4 = hd::GemmFormat<CK::kUint, 4, 0, 0, SL::kGroup, 1, 128, ST::kFp16,
                            ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  ExpectHostAgrees<
      hd::WgmmaConfig<W4, hd::WgmmaTile<8, 256, 128, 2, 4>, 8192, 8192>>(
      "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
      "tile=8x256x128,warps=1x8,stages=4,mma=wgmma");
  using W4Zero =
      hd::GemmFormat<CK::kUint, 4, 0, 0, SL::kGroup, 1, 32, ST::kBf16,
                     ZK::kInteger, SK::kNone, ST::kBf16, ST::kBf16, false>;
  ExpectHostAgrees<
      hd::WgmmaConfig<W4Zero, hd::WgmmaTile<16, 128, 128, 2, 8>, 4096, 4096>>(
      "weight=uint4,group=32,scale=bf16,zero=int,act=bf16,out=bf16",
      "tile=16x128x128,warps=1x8,stages=8,mma=wgmma");
  using W8Float =
      hd::GemmFormat<CK::kUint, 8, 0, 0, SL::kGroup, 1, 64, ST::kFp32,
                     ZK::kFloat, SK::kNone, ST::kFp16, ST::kFp16, false>;
  ExpectHostAgrees<
      hd::WgmmaConfig<W8Float, hd::WgmmaTile<32, 128, 64, 2, 6>, 2048, 4096>>(
      "weight=uint8,group=64,scale=fp32,zero=float,act=fp16,out=fp16",
      "tile=32x128x64,warps=1x8,stages=6,mma=wgmma");
  using E4Channel =
      hd::GemmFormat<CK::kFloat, 8, 4, 3, SL::kChannel, 1, 1, ST::kBf16,
                     ZK::kNone, SK::kNone, ST::kBf16, ST::kBf16, false>;
  ExpectHostAgrees<hd::WgmmaConfig<
      E4Channel, hd::WgmmaTile<8, 256, 64, 2, 5, true>, 4096, 8192>>(
      "weight=e4m3,group=channel,scale=bf16,act=bf16,"
      "out=bf16",
      "tile=8x256x64,warps=1x8,stages=5,mma=wgmma,"
      "copy=bulk");
  using E2Micro =
      hd::GemmFormat<CK::kFloat, 4, 2, 1, SL::kGroup, 1, 32, ST::kUe8m0,
                     ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  ExpectHostAgrees<
      hd::WgmmaConfig<E2Micro, hd::WgmmaTile<64, 128, 128, 2, 4>, 1024, 2048>>(
      "weight=e2m1,group=32,scale=ue8m0,act=fp16,out=fp16",
      "tile=64x128x128,warps=1x8,stages=4,mma=wgmma");
  using E4Block =
      hd::GemmFormat<CK::kFloat, 8, 4, 3, SL::kBlock, 128, 128, ST::kFp32,
                     ZK::kNone, SK::kNone, ST::kBf16, ST::kBf16, false>;
  ExpectHostAgrees<
      hd::WgmmaConfig<E4Block, hd::WgmmaTile<8, 256, 64, 2, 5>, 512, 1024>>(
      "weight=e4m3,group=128x128,scale=fp32,act=bf16,out=bf16",
      "tile=8x256x64,warps=1x8,stages=5,mma=wgmma");
  using U8Tensor =
      hd::GemmFormat<CK::kUint, 8, 0, 0, SL::kTensor, 1, 1, ST::kFp32,
                     ZK::kFloat, SK::kNone, ST::kFp16, ST::kFp16, false>;
  ExpectHostAgrees<
      hd::WgmmaConfig<U8Tensor, hd::WgmmaTile<16, 128, 64, 2, 12>, 256, 1024>>(
      "weight=uint8,group=tensor,scale=fp32,zero=float,act=fp16,out=fp16",
      "tile=16x128x64,warps=1x8,stages=12,mma=wgmma");
  // k-split warps: a three-stage ring runs two tiles ahead (the chunks span
  // both: one entry per 128 columns, eight per 1024-column tile), four
  // stages two as before.
  using KSplit3 = hd::WgmmaConfig<
      W4, hd::WgmmaTile<8, 32, 1024, 2, 3, false, false, false, 4>, 6144, 4096>;
  ExpectHostAgrees<KSplit3>(
      "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
      "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4");
  EXPECT_EQ(KSplit3::kAhead, 2);
  // Slice rings at two blocks per SM: long scale chunks, eight tiles of
  // eight 2-byte entries (128 bytes a row), so the block meets once per
  // eight tiles instead of every second one.
  EXPECT_TRUE(KSplit3::kSliceRings);
  EXPECT_TRUE(KSplit3::kLongScaleChunks);
  EXPECT_EQ(KSplit3::kChunkTiles, 8);
  EXPECT_EQ(KSplit3::kRowBlocks, 1);
  EXPECT_EQ(KSplit3::kUnitsKPerWarp, 4);
  using KSplit4 =
      hd::WgmmaConfig<W4Zero,
                      hd::WgmmaTile<8, 16, 1024, 2, 4, false, false, false, 8>,
                      4096, 2048>;
  ExpectHostAgrees<KSplit4>(
      "weight=uint4,group=32,scale=bf16,zero=int,act=bf16,out=bf16",
      "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8");
  EXPECT_EQ(KSplit4::kAhead, 2);
  // 4-bit weights on one n-unit at four stages keep the lead's chunks (they
  // ran 1.005-1.024x with long ones, decode-notes v102).
  EXPECT_TRUE(KSplit4::kSliceRings);
  EXPECT_FALSE(KSplit4::kLongScaleChunks);
  EXPECT_EQ(KSplit4::kChunkTiles, 2);
  // Groups of 32 in bf16 on a tile that takes long chunks: 32 entries a
  // tile (64 bytes a row), so still two tiles a chunk, the lead.
  using KSplit4Three =
      hd::WgmmaConfig<W4Zero,
                      hd::WgmmaTile<8, 16, 1024, 2, 3, false, false, false, 8>,
                      4096, 2048>;
  ExpectHostAgrees<KSplit4Three>(
      "weight=uint4,group=32,scale=bf16,zero=int,act=bf16,out=bf16",
      "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8");
  EXPECT_TRUE(KSplit4Three::kLongScaleChunks);
  EXPECT_EQ(KSplit4Three::kChunkTiles, 2);
  // Long chunks stay off where the tile is planned at three blocks per SM
  // (8-bit 16x16x512 on 6144 x 4096: the longer windows would cost it its
  // residency) and where the slices share the block barrier (8-bit weights
  // on two n-units).
  using W8 = hd::GemmFormat<CK::kUint, 8, 0, 0, SL::kGroup, 1, 128, ST::kFp16,
                            ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  using KSplit8Three = hd::WgmmaConfig<
      W8, hd::WgmmaTile<16, 16, 512, 2, 3, false, false, false, 8, 3>, 6144,
      4096>;
  ExpectHostAgrees<KSplit8Three>(
      "weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
      "tile=16x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=3");
  EXPECT_TRUE(KSplit8Three::kSliceRings);
  EXPECT_FALSE(KSplit8Three::kLongScaleChunks);
  EXPECT_EQ(KSplit8Three::kChunkTiles, 2);
  using KSplit8Pairs = hd::WgmmaConfig<
      W8, hd::WgmmaTile<8, 32, 512, 2, 4, false, false, false, 4>, 6144, 4096>;
  ExpectHostAgrees<KSplit8Pairs>(
      "weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
      "tile=8x32x512,warps=1x8,stages=4,mma=wgmma,ksplit=4");
  EXPECT_FALSE(KSplit8Pairs::kSliceRings);
  EXPECT_EQ(KSplit8Pairs::kChunkTiles, 2);
  using KSplit8One =
      hd::WgmmaConfig<W8,
                      hd::WgmmaTile<8, 16, 1024, 2, 3, false, false, false, 8>,
                      4096, 14336>;
  ExpectHostAgrees<KSplit8One>(
      "weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
      "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8");
  EXPECT_TRUE(KSplit8One::kLongScaleChunks);
  EXPECT_EQ(KSplit8One::kChunkTiles, 8);
  // Planner v55's tile: 4-bit fp16 in 16-row blocks of three stages on
  // 4096 x 14336, eight-tile chunks (chunks at tiles 0 and 8 of 14).
  using KSplit4Long =
      hd::WgmmaConfig<W4,
                      hd::WgmmaTile<8, 16, 1024, 2, 3, false, false, false, 8>,
                      4096, 14336>;
  ExpectHostAgrees<KSplit4Long>(
      "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
      "tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8");
  EXPECT_TRUE(KSplit4Long::kLongScaleChunks);
  EXPECT_EQ(KSplit4Long::kChunkTiles, 8);
  EXPECT_EQ(KSplit4Long::kScaleWindowWords, 9);
  // 16 tokens: two m16n8 fragments per warp, four stages two ahead.
  using KSplit16 = hd::WgmmaConfig<
      W4, hd::WgmmaTile<16, 32, 512, 2, 4, false, false, false, 4>, 6144, 4096>;
  ExpectHostAgrees<KSplit16>(
      "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
      "tile=16x32x512,warps=1x8,stages=4,mma=wgmma,ksplit=4");
  EXPECT_EQ(KSplit16::kAccumulators, 8);
  EXPECT_EQ(KSplit16::kAhead, 2);
  EXPECT_EQ(hd::wgmma_ring_lead(3, 1), 1);
  EXPECT_EQ(hd::wgmma_ring_lead(6, 4), 4);
  // The warps' rows and slices: 8 warps over 2 n-units and 4 slices; the
  // plain tile's warp w owns n-unit (w / 4) * row_blocks * 4 + w % 4 + 4 r.
  EXPECT_EQ(KSplit3::warp_row_unit(5, 0), 1);
  EXPECT_EQ(KSplit3::warp_k_slice(5), 2);
  using Plain =
      hd::WgmmaConfig<W4, hd::WgmmaTile<8, 256, 128, 2, 4>, 8192, 8192>;
  EXPECT_EQ(Plain::warp_row_unit(5, 1), 13);
  EXPECT_EQ(Plain::warp_k_slice(5), 0);
  // The register cap the skeleton reads (two blocks of 256 threads by
  // default; 8-register allocation steps, at most 255) and the tiles its
  // k-loop runs per pass: a whole ring, unrolled, for up to 16 accumulators
  // at 128 registers or more; one under a tighter cap or with more
  // accumulators.
  ExpectCapAndTilesPerPass<Plain>(128, 4);
  ExpectCapAndTilesPerPass<KSplit3>(128, 3);
  ExpectCapAndTilesPerPass<KSplit16>(128, 4);
  // Three per SM, four per SM, sixteen warps at one per SM.
  ExpectCapAndTilesPerPass<hd::WgmmaConfig<
      W4, hd::WgmmaTile<16, 128, 128, 2, 4, false, false, false, 1, 3>, 6144,
      4096>>(80, 1);
  ExpectCapAndTilesPerPass<hd::WgmmaConfig<
      W4, hd::WgmmaTile<8, 128, 128, 2, 4, false, false, false, 1, 4>, 28672,
      8192>>(64, 1);
  ExpectCapAndTilesPerPass<hd::WgmmaConfig<
      W4, hd::WgmmaTile<16, 32, 1024, 4, 4, false, false, false, 8, 1>, 4096,
      4096>>(128, 4);
  // 64 and 256 tokens.
  ExpectCapAndTilesPerPass<
      hd::WgmmaConfig<W4, hd::WgmmaTile<64, 128, 128, 2, 4>, 8192, 8192>>(128,
                                                                          1);
  ExpectCapAndTilesPerPass<hd::WgmmaConfig<
      W4, hd::WgmmaTile<256, 128, 128, 2, 3, false, false, false, 1, 1>, 8192,
      8192>>(255, 1);
}

// The k-split warp tiles whose k-loop takes its tile count at compile time
// (they run unsplit): those sweeps ea / eb measured faster with it, not the
// 32-token warpgroup slices (they spilled), nor 8-token tiles of fewer than
// eight k-tiles unless 8-bit with early=1 (bench/decode-notes.md v105).
TEST(WgmmaConfigTest, KSplitTilesTakeCompileTimeKTilesWhereMeasuredFaster) {
  using W4 = hd::GemmFormat<CK::kUint, 4, 0, 0, SL::kGroup, 1, 128, ST::kFp16,
                            ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  using W8 = hd::GemmFormat<CK::kUint, 8, 0, 0, SL::kGroup, 1, 128, ST::kFp16,
                            ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  // 16-token warpgroup slices and sixteen-warp k-split blocks.
  EXPECT_TRUE(
      (hd::WgmmaConfig<
          W4, hd::WgmmaTile<16, 64, 512, 4, 4, false, false, false, 4, 1, 1>,
          8192, 8192>::kCompileTimeKTiles));
  EXPECT_TRUE((hd::WgmmaConfig<
               W4, hd::WgmmaTile<16, 32, 1024, 4, 4, false, false, false, 8, 1>,
               4096, 4096>::kCompileTimeKTiles));
  // 32 tokens: no.
  EXPECT_FALSE(
      (hd::WgmmaConfig<
          W4, hd::WgmmaTile<32, 64, 512, 4, 4, false, false, false, 4, 1, 1>,
          8192, 8192>::kCompileTimeKTiles));
  // 8-token 4-bit tiles: eight k-tiles yes, four no (early or not).
  using KSplit8x32 =
      hd::WgmmaTile<8, 32, 1024, 2, 3, false, false, false, 4, 2, 1>;
  EXPECT_TRUE(
      (hd::WgmmaConfig<W4, KSplit8x32, 8192, 8192>::kCompileTimeKTiles));
  EXPECT_FALSE(
      (hd::WgmmaConfig<W4, KSplit8x32, 6144, 4096>::kCompileTimeKTiles));
  // 8-token 8-bit tiles: four k-tiles only with early=1; fourteen always.
  using KSplit8x16 = hd::WgmmaTile<8, 16, 1024, 2, 3, false, false, false, 8>;
  using KSplit8x16Early =
      hd::WgmmaTile<8, 16, 1024, 2, 3, false, false, false, 8, 2, 1>;
  EXPECT_FALSE(
      (hd::WgmmaConfig<W8, KSplit8x16, 4096, 4096>::kCompileTimeKTiles));
  EXPECT_TRUE(
      (hd::WgmmaConfig<W8, KSplit8x16Early, 4096, 4096>::kCompileTimeKTiles));
  EXPECT_TRUE(
      (hd::WgmmaConfig<W8, KSplit8x16, 4096, 14336>::kCompileTimeKTiles));
  // Tiles without k-split warps take the split's range at run time.
  EXPECT_FALSE((hd::WgmmaConfig<W4, hd::WgmmaTile<16, 128, 256, 2, 4>, 28672,
                                8192>::kCompileTimeKTiles));
}

// Where a compile-time K fits the ring and its scales one chunk, a tile with
// early=N copies all of K in the prologue (kAhead = its k-tiles), at 16
// tokens where it was measured; every other tile keeps the ring's lead
// (bench/decode-notes.md v106).
TEST(WgmmaConfigTest, PrologueCopiesAllOfKOnlyWhereTheRingHoldsIt) {
  using W4 = hd::GemmFormat<CK::kUint, 4, 0, 0, SL::kGroup, 1, 128, ST::kFp16,
                            ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  using W4G32 =
      hd::GemmFormat<CK::kUint, 4, 0, 0, SL::kGroup, 1, 32, ST::kFp16,
                     ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  using SixteenWarps =
      hd::WgmmaTile<16, 32, 1024, 4, 4, false, false, false, 8, 1>;
  using SixteenWarpsEarly =
      hd::WgmmaTile<16, 32, 1024, 4, 4, false, false, false, 8, 1, 1>;
  // Four k-tiles in four stages, early=1: all of K.
  using Whole = hd::WgmmaConfig<W4, SixteenWarpsEarly, 4096, 4096>;
  EXPECT_TRUE(Whole::kWholeKInRing);
  EXPECT_EQ(Whole::kAhead, 4);
  EXPECT_EQ(Whole::kRingLead, 2);
  // Three k-tiles: all three. Two: the lead holds them already.
  EXPECT_EQ((hd::WgmmaConfig<W4, SixteenWarpsEarly, 4096, 3072>::kAhead), 3);
  using Short = hd::WgmmaConfig<W4, SixteenWarpsEarly, 4096, 2048>;
  EXPECT_FALSE(Short::kWholeKInRing);
  EXPECT_EQ(Short::kAhead, 2);
  // Without early=N, or five k-tiles: the ring's lead.
  using AllEarly = hd::WgmmaConfig<W4, SixteenWarps, 4096, 4096>;
  EXPECT_FALSE(AllEarly::kWholeKInRing);
  EXPECT_EQ(AllEarly::kAhead, 2);
  using Longer = hd::WgmmaConfig<W4, SixteenWarpsEarly, 4096, 5120>;
  EXPECT_FALSE(Longer::kWholeKInRing);
  EXPECT_EQ(Longer::kAhead, 2);
  // Groups of 32: a chunk spans fewer tiles than K holds.
  using FineScales = hd::WgmmaConfig<W4G32, SixteenWarpsEarly, 4096, 4096>;
  EXPECT_LT(FineScales::kChunkTiles, FineScales::kKTiles);
  EXPECT_FALSE(FineScales::kWholeKInRing);
  EXPECT_EQ(FineScales::kAhead, 2);
  // A run-time K (split-K tiles): never, even where it would fit.
  using Split = hd::WgmmaConfig<
      W4, hd::WgmmaTile<16, 64, 256, 1, 4, false, false, false, 1, 3, 1>, 6144,
      1024>;
  EXPECT_FALSE(Split::kCompileTimeKTiles);
  EXPECT_FALSE(Split::kWholeKInRing);
  // 8 tokens: the 8-bit three-stage k-split tile over three k-tiles with
  // early=1 (4096 x 3072, planned from M = 6) fits its ring too, but was
  // not measured so: the lead.
  using W8 = hd::GemmFormat<CK::kUint, 8, 0, 0, SL::kGroup, 1, 128, ST::kFp16,
                            ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  using EightTokens = hd::WgmmaConfig<
      W8, hd::WgmmaTile<8, 16, 1024, 2, 3, false, false, false, 8, 2, 1>, 4096,
      3072>;
  EXPECT_TRUE(EightTokens::kCompileTimeKTiles);
  EXPECT_FALSE(EightTokens::kWholeKInRing);
  EXPECT_EQ(EightTokens::kAhead, 2);
}

TEST(WgmmaConfigTest, ChunkWindowsHoldEveryElementTheirTilesRead) {
  // fp16 scales, one entry per tile; groups of 32 (four per tile); groups
  // wider than a tile (one entry per two tiles); channel-wise; 1-byte and
  // 4-byte elements; a row length that is no multiple of 16 bytes (K / group
  // = 5 entries of 2 bytes).
  using G128 =
      hd::GemmFormat<CK::kUint, 4, 0, 0, SL::kGroup, 1, 128, ST::kFp16,
                     ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  using C1 = hd::WgmmaConfig<G128, hd::WgmmaTile<8, 128, 128, 2, 8>, 256, 2048>;
  ExpectWindowsHoldTheirChunks<C1, 2, C1::kScaleWindowWords>();
  using C5 = hd::WgmmaConfig<G128, hd::WgmmaTile<8, 128, 128, 2, 3>, 256, 640>;
  ExpectWindowsHoldTheirChunks<C5, 2, C5::kScaleWindowWords>();
  using G32 =
      hd::GemmFormat<CK::kUint, 4, 0, 0, SL::kGroup, 1, 32, ST::kFp32,
                     ZK::kInteger, SK::kNone, ST::kFp16, ST::kFp16, false>;
  using C2 = hd::WgmmaConfig<G32, hd::WgmmaTile<8, 128, 128, 2, 6>, 256, 2048>;
  ExpectWindowsHoldTheirChunks<C2, 4, C2::kScaleWindowWords>();
  ExpectWindowsHoldTheirChunks<C2, 1, C2::kZeroWindowWords>();
  using G256 =
      hd::GemmFormat<CK::kUint, 8, 0, 0, SL::kGroup, 1, 256, ST::kUe8m0,
                     ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  using C3 = hd::WgmmaConfig<G256, hd::WgmmaTile<8, 128, 64, 2, 5>, 256, 4096>;
  ExpectWindowsHoldTheirChunks<C3, 1, C3::kScaleWindowWords>();
  using Channel =
      hd::GemmFormat<CK::kUint, 4, 0, 0, SL::kChannel, 1, 1, ST::kFp16,
                     ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  using C4 =
      hd::WgmmaConfig<Channel, hd::WgmmaTile<8, 128, 128, 2, 4>, 256, 1024>;
  ExpectWindowsHoldTheirChunks<C4, 2, C4::kScaleWindowWords>();
  // 128 x 128 blocks (rows share a scale row) and one tensor-wide scale.
  using Block =
      hd::GemmFormat<CK::kFloat, 8, 4, 3, SL::kBlock, 128, 128, ST::kFp32,
                     ZK::kNone, SK::kNone, ST::kBf16, ST::kBf16, false>;
  using C6 = hd::WgmmaConfig<Block, hd::WgmmaTile<8, 256, 64, 2, 5>, 512, 1024>;
  ExpectWindowsHoldTheirChunks<C6, 4, C6::kScaleWindowWords>();
  using Tensor =
      hd::GemmFormat<CK::kUint, 8, 0, 0, SL::kTensor, 1, 1, ST::kFp32,
                     ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  using C7 =
      hd::WgmmaConfig<Tensor, hd::WgmmaTile<8, 128, 64, 2, 12>, 256, 1024>;
  ExpectWindowsHoldTheirChunks<C7, 4, C7::kScaleWindowWords>();
  // k-split warps: slices of 256 columns (one group of 128 is half a
  // slice), of 128 (groups of 32, four per slice; of 256, a slice is half
  // a group) and the channel-wise scale of K = 3072 (a slice of 128 lies in
  // it).
  using K4 =
      hd::WgmmaConfig<G128,
                      hd::WgmmaTile<8, 32, 1024, 2, 3, false, false, false, 4>,
                      256, 4096>;
  ExpectWindowsHoldTheirChunks<K4, 2, K4::kScaleWindowWords>();
  // Long chunks (eight tiles) over a K of 14 tiles: a whole chunk, then
  // one that runs past K.
  using K4Long =
      hd::WgmmaConfig<G128,
                      hd::WgmmaTile<8, 16, 1024, 2, 3, false, false, false, 8>,
                      256, 14336>;
  static_assert(K4Long::kChunkTiles == 8, "long chunks");
  ExpectWindowsHoldTheirChunks<K4Long, 2, K4Long::kScaleWindowWords>();
  using K8 = hd::WgmmaConfig<
      G32, hd::WgmmaTile<8, 16, 1024, 2, 4, false, false, false, 8>, 256, 4096>;
  ExpectWindowsHoldTheirChunks<K8, 4, K8::kScaleWindowWords>();
  ExpectWindowsHoldTheirChunks<K8, 1, K8::kZeroWindowWords>();
  using G256W4 =
      hd::GemmFormat<CK::kUint, 4, 0, 0, SL::kGroup, 1, 256, ST::kFp16,
                     ZK::kNone, SK::kNone, ST::kFp16, ST::kFp16, false>;
  using K8Wide =
      hd::WgmmaConfig<G256W4,
                      hd::WgmmaTile<8, 16, 1024, 2, 4, false, false, false, 8>,
                      256, 4096>;
  ExpectWindowsHoldTheirChunks<K8Wide, 2, K8Wide::kScaleWindowWords>();
  using K8Channel =
      hd::WgmmaConfig<Channel,
                      hd::WgmmaTile<8, 16, 1024, 2, 4, false, false, false, 8>,
                      256, 3072>;
  ExpectWindowsHoldTheirChunks<K8Channel, 2, K8Channel::kScaleWindowWords>();
}

}  // namespace
}  // namespace hummingd
