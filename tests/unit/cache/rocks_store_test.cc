#include "cache/rocks_store.h"

#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cache/kernel_store.h"
#include "cache/keys.h"
#include "cache/record_codec.h"
#include "cache_test_util.h"
#include "common/hashing.h"
#include "gtest/gtest.h"
#include "raw_db.h"
#include "store_test_fixture.h"

namespace hummingd {
namespace {

using cache_test::RandomArtifact;
using cache_test::RandomPlan;
using cache_test::RawDb;

class RocksStoreTest : public cache_test::StoreTest {};

TEST_F(RocksStoreTest, CreatesMissingDirectories) {
  options_.directory = dir_.Sub("a/b/c");
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(std::filesystem::is_directory(options_.directory));
}

TEST_F(RocksStoreTest, RejectsBadOptions) {
  RocksStoreOptions bad = options_;
  bad.directory.clear();
  EXPECT_EQ(OpenRocksStore(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = options_;
  bad.max_bytes = 0;
  absl::Status status = OpenRocksStore(bad).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("max_bytes"), std::string_view::npos);
}

TEST_F(RocksStoreTest, PutGetAndPersistAcrossReopen) {
  const ArtifactRecord artifact = RandomArtifact(rng_, 64 << 10);
  const PlanRecord plan = RandomPlan(rng_, 4);
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutArtifact("artifact-1", artifact).ok());
    ASSERT_TRUE(store->PutPlan("plan-1", plan).ok());
    auto got = store->GetArtifact("artifact-1");
    ASSERT_TRUE(got.ok() && *got != nullptr);
    EXPECT_EQ(**got, Stored(artifact));
  }
  auto store = Open();
  ASSERT_NE(store, nullptr);
  auto got = store->GetArtifact("artifact-1");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_NE(*got, nullptr);
  EXPECT_EQ(**got, Stored(artifact));
  auto got_plan = store->GetPlan("plan-1");
  ASSERT_TRUE(got_plan.ok()) << got_plan.status();
  ASSERT_TRUE(got_plan->has_value());
  EXPECT_EQ(**got_plan, plan);

  auto missing = store->GetArtifact("artifact-2");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(*missing, nullptr);
  auto missing_plan = store->GetPlan("plan-2");
  ASSERT_TRUE(missing_plan.ok());
  EXPECT_FALSE(missing_plan->has_value());

  const StoreStats stats = store->Stats();
  EXPECT_EQ(stats.artifact_entries, 1);
  EXPECT_EQ(stats.plan_entries, 1);
  EXPECT_GT(stats.artifact_bytes, 64 << 10);

  auto listing = store->ListArtifacts();
  ASSERT_TRUE(listing.ok());
  ASSERT_EQ(listing->size(), 1u);
  EXPECT_EQ((*listing)[0].key, "artifact-1");
  EXPECT_EQ((*listing)[0].entry, artifact.entry);
  EXPECT_EQ((*listing)[0].arch, artifact.arch);
  EXPECT_EQ((*listing)[0].description, artifact.description);
  EXPECT_EQ((*listing)[0].compile_ms, artifact.compile_ms);
  EXPECT_EQ((*listing)[0].bytes, stats.artifact_bytes);
  EXPECT_FALSE((*listing)[0].pinned);
}

TEST_F(RocksStoreTest, ReplacingAnArtifactKeepsAccountingExact) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutArtifact("k", RandomArtifact(rng_, 10000)).ok());
  const int64_t first = store->Stats().artifact_bytes;
  const ArtifactRecord bigger = RandomArtifact(rng_, 30000);
  ASSERT_TRUE(store->PutArtifact("k", bigger).ok());
  const StoreStats stats = store->Stats();
  EXPECT_EQ(stats.artifact_entries, 1);
  EXPECT_GT(stats.artifact_bytes, first + 19000);
  auto got = store->GetArtifact("k");
  ASSERT_TRUE(got.ok() && *got != nullptr);
  EXPECT_EQ(**got, Stored(bigger));
}

TEST_F(RocksStoreTest, StatsCountHitsMissesAndMemoryHits) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutArtifact("a", RandomArtifact(rng_, 2000)).ok());
    ASSERT_TRUE(store->PutPlan("p", RandomPlan(rng_, 2)).ok());
  }
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->GetArtifact("a").ok());  // disk, then memory
  ASSERT_TRUE(store->GetArtifact("a").ok());
  ASSERT_TRUE(store->GetArtifact("a").ok());
  ASSERT_TRUE(store->GetArtifact("b").ok());  // miss
  ASSERT_TRUE(store->GetPlan("p").ok());
  ASSERT_TRUE(store->GetPlan("p").ok());
  ASSERT_TRUE(store->GetPlan("q").ok());
  const StoreStats stats = store->Stats();
  EXPECT_EQ(stats.artifact_hits, 3);
  EXPECT_EQ(stats.memory_hits, 2);
  EXPECT_EQ(stats.artifact_misses, 1);
  EXPECT_EQ(stats.plan_hits, 2);
  EXPECT_EQ(stats.plan_misses, 1);
  EXPECT_EQ(stats.corrupt_dropped, 0);
  EXPECT_EQ(stats.evictions, 0);
  EXPECT_EQ(stats.max_bytes, options_.max_bytes);
}

TEST_F(RocksStoreTest, MemoryTierCanBeDisabled) {
  options_.memory_tier_bytes = 0;
  auto store = Open();
  ASSERT_NE(store, nullptr);
  const ArtifactRecord artifact = RandomArtifact(rng_, 5000);
  ASSERT_TRUE(store->PutArtifact("a", artifact).ok());
  for (int i = 0; i < 3; ++i) {
    auto got = store->GetArtifact("a");
    ASSERT_TRUE(got.ok() && *got != nullptr);
    EXPECT_EQ(**got, Stored(artifact));
  }
  EXPECT_EQ(store->Stats().artifact_hits, 3);
  EXPECT_EQ(store->Stats().memory_hits, 0);
}

// Flips one payload byte on disk behind the store's back: the store must drop
// the value, count it and report a miss, never return it.
TEST_F(RocksStoreTest, CorruptArtifactOnDiskIsDroppedNotServed) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutArtifact("bad", RandomArtifact(rng_, 3000)).ok());
    ASSERT_TRUE(store->PutArtifact("good", RandomArtifact(rng_, 3000)).ok());
  }
  {
    RawDb raw(options_.directory);
    std::optional<std::string> value = raw.Get("artifacts", "bad");
    ASSERT_TRUE(value.has_value());
    const size_t offset = 100 + rng_() % (value->size() - 100);
    (*value)[offset] = static_cast<char>((*value)[offset] ^ 0x10);
    raw.Put("artifacts", "bad", *value);
  }
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    auto got = store->GetArtifact("bad");
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, nullptr);
    EXPECT_TRUE(Has(*store, "good"));
    const StoreStats stats = store->Stats();
    EXPECT_EQ(stats.corrupt_dropped, 1);
    EXPECT_EQ(stats.artifact_entries, 1);
  }
  RawDb raw(options_.directory);
  EXPECT_FALSE(raw.Get("artifacts", "bad").has_value());
  EXPECT_FALSE(
      raw.Get("meta", cache_internal::ArtifactMetaKey("bad")).has_value());
  EXPECT_TRUE(raw.Get("artifacts", "good").has_value());
}

// A value whose envelope is intact but whose cubin does not match its
// recorded checksum is caught on the read path (the open scan only checks
// the envelope).
TEST_F(RocksStoreTest, CubinChecksumMismatchIsDroppedOnRead) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutArtifact("k", RandomArtifact(rng_, 3000)).ok());
  }
  {
    RawDb raw(options_.directory);
    ArtifactRecord forged = RandomArtifact(rng_, 3000);
    forged.cubin_checksum = Checksum64(forged.cubin) + 1;
    raw.Put("artifacts", "k", cache_internal::EncodeArtifactValue(forged));
  }
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->Stats().artifact_entries, 1);
    auto got = store->GetArtifact("k");
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, nullptr);
    const StoreStats stats = store->Stats();
    EXPECT_EQ(stats.corrupt_dropped, 1);
    EXPECT_EQ(stats.artifact_entries, 0);
    EXPECT_EQ(stats.artifact_bytes, 0);
    EXPECT_EQ(stats.artifact_misses, 1);
  }
  RawDb raw(options_.directory);
  EXPECT_FALSE(raw.Get("artifacts", "k").has_value());
}

TEST_F(RocksStoreTest, CorruptPlanIsDroppedNotServed) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutPlan("p", RandomPlan(rng_, 3)).ok());
  }
  {
    RawDb raw(options_.directory);
    std::optional<std::string> value = raw.Get("plans", "p");
    ASSERT_TRUE(value.has_value());
    value->resize(value->size() - 5);  // truncated
    raw.Put("plans", "p", *value);
  }
  auto store = Open();
  ASSERT_NE(store, nullptr);
  auto got = store->GetPlan("p");
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
  EXPECT_EQ(store->Stats().corrupt_dropped, 1);
  EXPECT_EQ(store->Stats().plan_entries, 0);
}

TEST_F(RocksStoreTest, OtherSchemaVersionIsClearedNotFatal) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutArtifact("a", RandomArtifact(rng_, 1000)).ok());
    ASSERT_TRUE(store->PutPlan("p", RandomPlan(rng_, 1)).ok());
  }
  {
    RawDb raw(options_.directory);
    raw.Put("meta", cache_internal::kSchemaMarkerKey,
            cache_internal::EncodeSchemaMarkerValue(kCacheSchemaVersion + 1));
  }
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    EXPECT_FALSE(Has(*store, "a"));
    auto plan = store->GetPlan("p");
    ASSERT_TRUE(plan.ok());
    EXPECT_FALSE(plan->has_value());
    EXPECT_EQ(store->Stats().artifact_entries, 0);
    EXPECT_EQ(store->Stats().plan_entries, 0);
    ASSERT_TRUE(store->PutArtifact("b", RandomArtifact(rng_, 1000)).ok());
  }
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(Has(*store, "b"));
}

class EvictionTest : public RocksStoreTest {
 protected:
  void SetUp() override {
    RocksStoreTest::SetUp();
    // Equal-size artifacts; room for three and a half of them.
    value_bytes_ = static_cast<int64_t>(
        cache_internal::EncodeArtifactValue(Make()).size());
    options_.max_bytes = 3 * value_bytes_ + value_bytes_ / 2;
    options_.memory_tier_bytes = 2 * value_bytes_;
  }

  ArtifactRecord Make() {
    ArtifactRecord record = RandomArtifact(rng_, 20000);
    record.description = "fixed-length description";
    record.entry = "fixed_entry";
    return record;
  }

  void ExpectBounded(KernelStore& store) {
    const StoreStats stats = store.Stats();
    EXPECT_LE(stats.artifact_bytes, stats.max_bytes);
  }

  int64_t value_bytes_ = 0;
};

TEST_F(EvictionTest, EvictsLeastRecentlyUsedAndHonoursPins) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutArtifact("A", Make()).ok());
    ASSERT_TRUE(store->PutArtifact("B", Make()).ok());
    ASSERT_TRUE(store->PutArtifact("C", Make()).ok());
    EXPECT_EQ(store->Stats().artifact_bytes, 3 * value_bytes_);
    EXPECT_TRUE(Has(*store, "A"));  // A is now more recent than B
    ASSERT_TRUE(store->PutArtifact("D", Make()).ok());
    ExpectBounded(*store);
    EXPECT_EQ(store->Stats().evictions, 1);
    EXPECT_EQ(store->Stats().artifact_entries, 3);
    EXPECT_FALSE(Has(*store, "B"));

    // Order now (oldest first): C, A, D. Pin C: A becomes the victim.
    ASSERT_TRUE(store->SetPinned("C", true).ok());
    ASSERT_TRUE(store->PutArtifact("E", Make()).ok());
    ExpectBounded(*store);
    EXPECT_EQ(store->Stats().evictions, 2);
    EXPECT_FALSE(Has(*store, "A"));
    auto listing = store->ListArtifacts();
    ASSERT_TRUE(listing.ok());
    ASSERT_EQ(listing->size(), 3u);
    EXPECT_EQ((*listing)[0].key, "C");
    EXPECT_TRUE((*listing)[0].pinned);
    EXPECT_EQ((*listing)[1].key, "D");
    EXPECT_EQ((*listing)[2].key, "E");
    EXPECT_TRUE(Has(*store, "D"));  // order now: C (pinned), E, D
  }
  // Access ticks and pins survive a reopen: E is the least recent unpinned.
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutArtifact("F", Make()).ok());
  ExpectBounded(*store);
  EXPECT_FALSE(Has(*store, "E"));
  EXPECT_TRUE(Has(*store, "C"));
  EXPECT_TRUE(Has(*store, "D"));
  EXPECT_TRUE(Has(*store, "F"));
  EXPECT_EQ(store->Stats().evictions, 1);
}

TEST_F(EvictionTest, PinnedArtifactsAreNeverEvicted) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  for (const char* key : {"P1", "P2", "P3"}) {
    ASSERT_TRUE(store->PutArtifact(key, Make()).ok());
    ASSERT_TRUE(store->SetPinned(key, true).ok());
  }
  absl::Status status = store->PutArtifact("X", Make());
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  for (const char* key : {"P1", "P2", "P3"}) EXPECT_TRUE(Has(*store, key));
  EXPECT_FALSE(Has(*store, "X"));
  EXPECT_EQ(store->Stats().evictions, 0);
  ExpectBounded(*store);

  ASSERT_TRUE(store->SetPinned("P2", false).ok());
  ASSERT_TRUE(store->PutArtifact("X", Make()).ok());
  EXPECT_FALSE(Has(*store, "P2"));
  EXPECT_TRUE(Has(*store, "P1"));
  EXPECT_TRUE(Has(*store, "P3"));
  EXPECT_TRUE(Has(*store, "X"));
  ExpectBounded(*store);
}

TEST_F(EvictionTest, ArtifactLargerThanMaxBytesIsResourceExhausted) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutArtifact("small", Make()).ok());
  ArtifactRecord huge = RandomArtifact(rng_, options_.max_bytes + 1);
  absl::Status status = store->PutArtifact("huge", huge);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_NE(status.message().find("max_bytes"), std::string_view::npos);
  EXPECT_TRUE(Has(*store, "small"));  // nothing evicted for a hopeless put
  EXPECT_EQ(store->Stats().evictions, 0);
}

TEST_F(EvictionTest, LowerMaxBytesIsEnforcedAtOpen) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    for (const char* key : {"A", "B", "C"}) {
      ASSERT_TRUE(store->PutArtifact(key, Make()).ok());
    }
    EXPECT_TRUE(Has(*store, "A"));
  }
  options_.max_bytes = 2 * value_bytes_;
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ExpectBounded(*store);
  EXPECT_EQ(store->Stats().evictions, 1);
  EXPECT_FALSE(Has(*store, "B"));
  EXPECT_TRUE(Has(*store, "A"));
  EXPECT_TRUE(Has(*store, "C"));
}

TEST_F(RocksStoreTest, EvictArtifactAndSetPinnedNeedAnExistingKey) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->EvictArtifact("nope").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->SetPinned("nope", true).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(store->PutArtifact("k", RandomArtifact(rng_, 1000)).ok());
  ASSERT_TRUE(store->EvictArtifact("k").ok());
  EXPECT_FALSE(Has(*store, "k"));
  EXPECT_EQ(store->EvictArtifact("k").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Stats().artifact_bytes, 0);
  EXPECT_EQ(store->GetArtifact("").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RocksStoreTest, EvictAllRemovesArtifactsPinsAndPlans) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    for (const char* key : {"a", "b", "c"}) {
      ASSERT_TRUE(store->PutArtifact(key, RandomArtifact(rng_, 2000)).ok());
    }
    ASSERT_TRUE(store->SetPinned("b", true).ok());
    ASSERT_TRUE(store->PutPlan("p1", RandomPlan(rng_, 2)).ok());
    ASSERT_TRUE(store->PutPlan("p2", RandomPlan(rng_, 2)).ok());
    auto count = store->EvictAll();
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(*count, 3);  // artifacts; the two plans go too
    EXPECT_FALSE(Has(*store, "a"));
    EXPECT_FALSE(Has(*store, "b"));
    auto plan = store->GetPlan("p1");
    ASSERT_TRUE(plan.ok());
    EXPECT_FALSE(plan->has_value());
    const StoreStats stats = store->Stats();
    EXPECT_EQ(stats.artifact_entries, 0);
    EXPECT_EQ(stats.artifact_bytes, 0);
    EXPECT_EQ(stats.plan_entries, 0);
    ASSERT_TRUE(store->PutArtifact("d", RandomArtifact(rng_, 2000)).ok());
  }
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(Has(*store, "a"));
  EXPECT_TRUE(Has(*store, "d"));
  EXPECT_EQ(store->Stats().artifact_entries, 1);
  EXPECT_EQ(store->Stats().plan_entries, 0);
}

constexpr char kLockedMessage[] =
    "is locked by another process (is another hummingd running on it?)";

TEST_F(RocksStoreTest, SecondOpenInSameProcessIsFailedPrecondition) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::unique_ptr<KernelStore>> second =
      OpenRocksStore(options_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      second.status().message(),
      absl::StrCat("cache dir ", options_.directory, " ", kLockedMessage));
  // The first store is unaffected.
  ASSERT_TRUE(store->PutArtifact("k", RandomArtifact(rng_, 100)).ok());
  EXPECT_TRUE(Has(*store, "k"));
}

}  // namespace
}  // namespace hummingd
