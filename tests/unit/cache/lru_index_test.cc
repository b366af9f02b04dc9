#include "cache/lru_index.h"

#include "cache/memory_tier.h"
#include "gtest/gtest.h"

namespace hummingd::cache_internal {
namespace {

TEST(LruIndexTest, PicksOldestUnpinnedWithTiesByKey) {
  LruIndex index;
  index.Upsert("b", 10, ArtifactMeta{.tick = 5}, {});
  index.Upsert("a", 10, ArtifactMeta{.tick = 5}, {});
  index.Upsert("c", 10, ArtifactMeta{.tick = 1, .pinned = true}, {});
  index.Upsert("d", 30, ArtifactMeta{.tick = 9}, {});
  EXPECT_EQ(index.total_bytes(), 60);
  EXPECT_GT(index.NextTick(), 9u);

  VictimPlan plan = index.PickVictims(15, "");
  ASSERT_EQ(plan.keys.size(), 2u);
  EXPECT_EQ(plan.keys[0], "a");
  EXPECT_EQ(plan.keys[1], "b");
  EXPECT_EQ(plan.freed_bytes, 20);

  ASSERT_TRUE(index.Touch("a"));
  plan = index.PickVictims(5, "");
  ASSERT_EQ(plan.keys.size(), 1u);
  EXPECT_EQ(plan.keys[0], "b");

  plan = index.PickVictims(1000, "d");  // everything unpinned except d
  EXPECT_EQ(plan.freed_bytes, 20);
  EXPECT_TRUE(index.PickVictims(0, "").keys.empty());
}

TEST(LruIndexTest, DirtyTicksAreTakenOnce) {
  LruIndex index;
  index.Upsert("x", 1, ArtifactMeta{.tick = 3}, {});
  index.Upsert("y", 1, ArtifactMeta{.tick = 4}, {});
  EXPECT_EQ(index.dirty_count(), 0);
  index.Touch("x");
  index.Touch("x");
  EXPECT_EQ(index.dirty_count(), 1);
  auto dirty = index.TakeDirtyMeta();
  ASSERT_EQ(dirty.size(), 1u);
  EXPECT_EQ(dirty[0].first, "x");
  EXPECT_GT(dirty[0].second.tick, 4u);
  EXPECT_TRUE(index.TakeDirtyMeta().empty());
  index.Touch("y");
  index.Remove("y");
  EXPECT_EQ(index.dirty_count(), 0);
  EXPECT_EQ(index.total_bytes(), 1);
}

TEST(MemoryTierTest, EvictsLeastRecentlyUsedWithinBytes) {
  MemoryTier<int> tier(100);
  tier.Put("a", std::make_shared<const int>(1), 40);
  tier.Put("b", std::make_shared<const int>(2), 40);
  ASSERT_NE(tier.Get("a"), nullptr);  // b is now least recent
  tier.Put("c", std::make_shared<const int>(3), 40);
  EXPECT_EQ(tier.Get("b"), nullptr);
  ASSERT_NE(tier.Get("a"), nullptr);
  EXPECT_EQ(*tier.Get("c"), 3);
  EXPECT_EQ(tier.bytes(), 80);
  tier.Put("huge", std::make_shared<const int>(4), 101);
  EXPECT_EQ(tier.Get("huge"), nullptr);
  EXPECT_EQ(tier.size(), 2u);
  tier.Put("a", std::make_shared<const int>(5), 10);  // replace
  EXPECT_EQ(*tier.Get("a"), 5);
  EXPECT_EQ(tier.bytes(), 50);
  tier.Erase("c");
  EXPECT_EQ(tier.bytes(), 10);
  tier.Clear();
  EXPECT_EQ(tier.size(), 0u);
}

}  // namespace
}  // namespace hummingd::cache_internal
