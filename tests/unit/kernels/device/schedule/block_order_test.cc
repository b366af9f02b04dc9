// schedule/block_order.cuh on the host: the grouped order is a bijection of
// the grid, the identity with one m-block, and keeps each wave of
// consecutive blocks within two groups of n-blocks and few m-blocks.

#include "schedule/block_order.cuh"

#include <set>
#include <utility>

#include "gtest/gtest.h"

namespace hummingd::device {
namespace {

template <u32 kGroupN>
void ExpectBijection(u32 grid_m, u32 grid_n) {
  std::set<std::pair<u32, u32>> seen;
  for (u32 y = 0; y < grid_n; ++y) {
    for (u32 x = 0; x < grid_m; ++x) {
      const BlockCoord c = grouped_block_order<kGroupN>(x, y, grid_m, grid_n);
      ASSERT_LT(c.m, grid_m) << x << "," << y;
      ASSERT_LT(c.n, grid_n) << x << "," << y;
      EXPECT_TRUE(seen.insert({c.m, c.n}).second)
          << "(" << c.m << ", " << c.n << ") twice";
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(grid_m) * grid_n);
}

TEST(BlockOrderTest, GroupedOrderCoversEveryTileOnce) {
  for (u32 grid_m : {1u, 2u, 5u, 16u, 128u}) {
    for (u32 grid_n : {1u, 2u, 15u, 16u, 17u, 32u, 224u}) {
      SCOPED_TRACE(::testing::Message() << grid_m << " x " << grid_n);
      ExpectBijection<16>(grid_m, grid_n);
      ExpectBijection<1>(grid_m, grid_n);
      ExpectBijection<3>(grid_m, grid_n);
    }
  }
}

TEST(BlockOrderTest, OneMBlockIsTheLaunchOrder) {
  for (u32 y = 0; y < 300; ++y) {
    const BlockCoord c = grouped_block_order<16>(0, y, 1, 300);
    EXPECT_EQ(c.m, 0u);
    EXPECT_EQ(c.n, y);
  }
}

TEST(BlockOrderTest, AGroupedWaveSpansFewMBlocks) {
  // 28672 x 8192 at M = 8192 in 256-row blocks: 128 x 112 blocks, 132
  // resident. In launch order a wave spans 2 n-blocks and all 128 m-blocks.
  constexpr u32 kGridM = 128, kGridN = 112, kWave = 132;
  for (u32 start = 0; start + kWave <= kGridM * kGridN; start += kWave) {
    std::set<u32> m_blocks, n_blocks;
    for (u32 linear = start; linear < start + kWave; ++linear) {
      const BlockCoord c = grouped_block_order<16>(
          linear % kGridM, linear / kGridM, kGridM, kGridN);
      m_blocks.insert(c.m);
      n_blocks.insert(c.n);
    }
    // At most two groups of 16 n-blocks, and 132 / 16 + 1 m-blocks.
    EXPECT_LE(n_blocks.size(), 32u) << start;
    EXPECT_LE(m_blocks.size(), 10u) << start;
  }
}

}  // namespace
}  // namespace hummingd::device
