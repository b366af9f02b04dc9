// The shared-memory stage of memory/warp_stage.cuh, checked on the host: the
// read side is the exact inverse of the write side (every output segment
// comes from the right row and quarter), and no 8-lane phase of either side
// hits a 16-byte bank group twice.

#include "memory/warp_stage.cuh"

#include <set>

#include "gtest/gtest.h"

namespace hummingd {
namespace {

TEST(WarpStageTest, CellsAreAPermutationOfTheStage) {
  std::set<int> cells;
  for (int row = 0; row < 32; ++row) {
    for (int quarter = 0; quarter < 4; ++quarter) {
      const int cell = device::stage_cell(row, quarter);
      EXPECT_GE(cell, 0);
      EXPECT_LT(cell, device::kStageWords / 4);
      cells.insert(cell);
    }
  }
  EXPECT_EQ(cells.size(), 128u);
}

TEST(WarpStageTest, StoreRoundsWriteTheTileInOrder) {
  // Segment s of the tile (16 bytes) is quarter s % 4 of row s / 4, i.e. the
  // row-major layout of (32 rows x 64 bytes).
  std::set<int> segments;
  for (int round = 0; round < 4; ++round) {
    for (int lane = 0; lane < 32; ++lane) {
      const int segment = round * 32 + lane;
      EXPECT_EQ(device::stage_source_row(round, lane), segment / 4);
      EXPECT_EQ(device::stage_source_quarter(lane), segment % 4);
      segments.insert(segment);
    }
  }
  EXPECT_EQ(segments.size(), 128u);
}

TEST(WarpStageTest, NoBankConflictsOnEitherSide) {
  // A 16-byte shared access is served in 4 phases of 8 lanes; 128 bytes of
  // banks hold 8 cells, so a phase is conflict-free when its 8 cells fall in
  // 8 different groups (cell % 8).
  for (int phase = 0; phase < 4; ++phase) {
    for (int quarter = 0; quarter < 4; ++quarter) {
      std::set<int> groups;
      for (int lane = 8 * phase; lane < 8 * phase + 8; ++lane) {
        groups.insert(device::stage_cell(lane, quarter) % 8);
      }
      EXPECT_EQ(groups.size(), 8u)
          << "write phase " << phase << " q" << quarter;
    }
    for (int round = 0; round < 4; ++round) {
      std::set<int> groups;
      for (int lane = 8 * phase; lane < 8 * phase + 8; ++lane) {
        groups.insert(device::stage_cell(device::stage_source_row(round, lane),
                                         device::stage_source_quarter(lane)) %
                      8);
      }
      EXPECT_EQ(groups.size(), 8u)
          << "read phase " << phase << " round " << round;
    }
  }
}

}  // namespace
}  // namespace hummingd
