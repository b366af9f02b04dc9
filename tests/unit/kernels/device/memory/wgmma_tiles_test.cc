// The weight copy's slot distances of memory/wgmma_tiles.cuh, checked on the
// host: where wgmma_weight_slots_at_offsets holds, every thread's slot i sits
// wgmma_weight_slot_offset words after its slot 0, as the copier's one
// pointer assumes; and the rule refuses a split where the distance depends
// on the thread.

#include "memory/wgmma_tiles.cuh"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace hummingd {
namespace {

// Word address, in the weight tensor, of chunk `id` of a stage whose runs
// are `run_words` apart (the copier's run_start(run) + chunk * 4).
int64_t ChunkWord(int id, int chunks_per_run, int64_t run_words) {
  return id / chunks_per_run * run_words + id % chunks_per_run * 4;
}

// Stand-ins for a WgmmaConfig's scale tiling: channel-wise scales on K =
// 14336 (one entry column) and groups of 128 on the same K.
struct ChannelScales {
  static constexpr int64_t kScaleTileK = 14336;
  static constexpr int64_t kScaleColumns = 1;
};
struct GroupScales {
  static constexpr int64_t kScaleTileK = 128;
  static constexpr int64_t kScaleColumns = 14336 / 128;
};

TEST(WgmmaTilesTest, ScaleColumnIsTheEntryHoldingTheColumn) {
  // Every k column of K lies in entry column k / kScaleTileK: 0 for one
  // entry per row, in both index types the kernels use.
  for (int k = 0; k < 14336; k += 16) {
    EXPECT_EQ(device::wgmma_scale_column<ChannelScales>(k), 0);
    EXPECT_EQ(device::wgmma_scale_column<ChannelScales>(int64_t{k}), 0);
    EXPECT_EQ(device::wgmma_scale_column<GroupScales>(k), k / 128);
    EXPECT_EQ(device::wgmma_scale_column<GroupScales>(int64_t{k}), k / 128);
  }
}

TEST(WgmmaTilesTest, WeightSlotsSitAtTheirOffsetsForEveryThread) {
  constexpr int64_t kRunWords = 224 * 128;  // K = 14336 of 4-bit units
  int checked = 0;
  for (const int threads : {128, 256, 512}) {
    for (const int chunks_per_run : {16, 32, 64, 128, 256, 512, 1024, 2048}) {
      for (const int runs : {1, 2, 4, 8, 16}) {
        const int chunks = runs * chunks_per_run;
        if (!device::wgmma_weight_slots_at_offsets(threads, chunks,
                                                   chunks_per_run)) {
          continue;
        }
        for (int slot = 0; slot < chunks / threads; ++slot) {
          const int64_t offset = device::wgmma_weight_slot_offset(
              slot, threads, chunks_per_run, kRunWords);
          for (int thread = 0; thread < threads; ++thread) {
            ASSERT_EQ(
                ChunkWord(thread + slot * threads, chunks_per_run, kRunWords),
                ChunkWord(thread, chunks_per_run, kRunWords) + offset)
                << "threads " << threads << ", chunks per run "
                << chunks_per_run << ", runs " << runs << ", slot " << slot
                << ", thread " << thread;
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(WgmmaTilesTest, SlotsWhoseDistanceDependsOnTheThreadKeepTheirPointers) {
  // 384 chunks per run over 256 threads: slot 1 of thread 0 is 256 chunks
  // on in run 0, of thread 200 (chunk 456) 72 chunks into run 1.
  EXPECT_FALSE(device::wgmma_weight_slots_at_offsets(256, 768, 384));
  EXPECT_NE(ChunkWord(256, 384, 1000) - ChunkWord(0, 384, 1000),
            ChunkWord(456, 384, 1000) - ChunkWord(200, 384, 1000));
  // A partial last slot (some threads copy nothing there).
  EXPECT_FALSE(device::wgmma_weight_slots_at_offsets(256, 640, 128));
}

TEST(WgmmaTilesTest, WarpRunSlotsCoverEveryChunkOnceAt512ByteSteps) {
  // Where wgmma_warp_run_slots holds, the warp-run assignment copies every
  // chunk of the stage exactly once, and each thread's slot i is 32 chunks
  // (512 bytes) after its slot 0 in the same run, so that the copier's one
  // pointer plus i * 512 bytes is the chunk's address in the tensor (runs
  // `run_words` apart) and in the stage (runs contiguous).
  constexpr int64_t kRunWords = 112 * 128;
  int checked = 0;
  for (const int threads : {128, 256, 512}) {
    for (const int chunks_per_run : {16, 32, 64, 128, 256, 512, 1024}) {
      for (const int runs : {1, 2, 4, 8, 16}) {
        const int chunks = runs * chunks_per_run;
        if (!device::wgmma_warp_run_slots(threads, chunks, chunks_per_run)) {
          continue;
        }
        const int slots = chunks / threads;
        std::vector<int> copies(chunks, 0);
        for (int thread = 0; thread < threads; ++thread) {
          const int first = device::wgmma_warp_run_chunk(thread, 0, slots);
          for (int slot = 0; slot < slots; ++slot) {
            const int id = device::wgmma_warp_run_chunk(thread, slot, slots);
            ASSERT_GE(id, 0);
            ASSERT_LT(id, chunks);
            ++copies[id];
            ASSERT_EQ(ChunkWord(id, chunks_per_run, kRunWords),
                      ChunkWord(first, chunks_per_run, kRunWords) + slot * 128)
                << "threads " << threads << ", chunks per run "
                << chunks_per_run << ", runs " << runs << ", thread " << thread
                << ", slot " << slot;
            ASSERT_EQ(id * 16, first * 16 + slot * 512);
          }
        }
        for (int id = 0; id < chunks; ++id) {
          ASSERT_EQ(copies[id], 1) << "chunk " << id << " of " << chunks;
        }
        // Each warp's instruction reads 512 contiguous bytes.
        for (int slot = 0; slot < slots; ++slot) {
          for (int lane = 1; lane < 32; ++lane) {
            ASSERT_EQ(device::wgmma_warp_run_chunk(lane, slot, slots),
                      device::wgmma_warp_run_chunk(0, slot, slots) + lane);
          }
        }
        ++checked;
      }
    }
  }
  // The planned decode tiles' weight copies among them: 8x32x1024 (256
  // threads, 2 runs of 512 chunks), 8x128x256 (8 runs of 128), 8x64x256 in
  // four warps (4 runs of 128), 64x128x128 (8 runs of 64).
  EXPECT_TRUE(device::wgmma_warp_run_slots(256, 1024, 512));
  EXPECT_TRUE(device::wgmma_warp_run_slots(256, 1024, 128));
  EXPECT_TRUE(device::wgmma_warp_run_slots(128, 512, 128));
  EXPECT_TRUE(device::wgmma_warp_run_slots(256, 512, 64));
  EXPECT_GT(checked, 20);
}

TEST(WgmmaTilesTest, WarpRunSlotsRefuseRunsSmallerThanAWarpsShare) {
  // 4 slots of 32 chunks need runs of 128: with runs of 64 a warp's slots
  // cross into the next run, runs apart in the tensor.
  EXPECT_FALSE(device::wgmma_warp_run_slots(256, 1024, 64));
  EXPECT_NE(ChunkWord(device::wgmma_warp_run_chunk(0, 2, 4), 64, 1000),
            ChunkWord(device::wgmma_warp_run_chunk(0, 0, 4), 64, 1000) + 256);
  // One slot per thread: nothing to share.
  EXPECT_FALSE(device::wgmma_warp_run_slots(256, 256, 256));
  // A partial last slot.
  EXPECT_FALSE(device::wgmma_warp_run_slots(256, 640, 640));
}

}  // namespace
}  // namespace hummingd
