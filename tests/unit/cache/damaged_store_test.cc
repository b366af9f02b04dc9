// A store whose disk goes bad or fills up while it runs: damage RocksDB finds
// after open (on a read, or in a compaction), an SST cut short, and a disk
// too full to grow the cache. Each must leave a working cache that serves
// nothing wrong, and never keep the operator from freeing space.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cache/kernel_store.h"
#include "cache_test_util.h"
#include "gtest/gtest.h"
#include "raw_db.h"
#include "sst_damage.h"
#include "store_test_fixture.h"

namespace hummingd {
namespace {

using cache_test::RandomArtifact;
using cache_test::RawDb;

class DamagedStoreTest : public cache_test::StoreTest {
 protected:
  // Three 20 KB artifacts k0..k2, flushed into an SST, and that SST's path.
  std::string StoreThreeInAnSst() {
    {
      auto store = Open();
      if (store == nullptr) return "";
      for (int i = 0; i < 3; ++i) {
        records_.push_back(Stored(RandomArtifact(rng_, 20000)));
        EXPECT_TRUE(
            store->PutArtifact(absl::StrCat("k", i), records_.back()).ok());
      }
    }
    RawDb(options_.directory).FlushAll();
    return cache_test::LargestSstFile(options_.directory, 30000);
  }

  // A store opened on a directory whose SST was damaged before the open:
  // it opens, serves nothing of it, counts one clear and works on.
  void ExpectTheOpenClearsIt() {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->Stats().corrupt_dropped, 1);
    EXPECT_EQ(store->Stats().artifact_entries, 0);
    for (int i = 0; i < 3; ++i) {
      auto got = store->GetArtifact(absl::StrCat("k", i));
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, nullptr) << "k" << i;
    }
    ExpectTheCacheWorksOn(std::move(store));
  }

  // After damage was cleared: a new artifact is stored, durably.
  void ExpectTheCacheWorksOn(std::unique_ptr<KernelStore> store) {
    const ArtifactRecord fresh = RandomArtifact(rng_, 1000);
    const absl::Status put = store->PutArtifact("fresh", fresh);
    ASSERT_TRUE(put.ok()) << put;
    store.reset();
    auto reopened = Open();
    ASSERT_NE(reopened, nullptr);
    EXPECT_EQ(reopened->Stats().corrupt_dropped, 0);
    EXPECT_EQ(reopened->Stats().artifact_entries, 1);
    auto got = reopened->GetArtifact("fresh");
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_NE(*got, nullptr);
    EXPECT_EQ((*got)->cubin, fresh.cubin);
  }

  std::vector<ArtifactRecord> records_;
};

// A block goes bad while the daemon runs. The read that meets it clears the
// cache (as the open scan would have), so no later compaction can stop the
// database's writes on it.
TEST_F(DamagedStoreTest, DamageFoundByAReadClearsTheCacheAndWritesGoOn) {
  const std::string sst = StoreThreeInAnSst();
  ASSERT_FALSE(sst.empty());
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(store->Stats().artifact_entries, 3);
  cache_test::FlipByteInside(sst);

  for (int i = 0; i < 3; ++i) {
    auto got = store->GetArtifact(absl::StrCat("k", i));
    ASSERT_TRUE(got.ok()) << got.status();
    // Read before the damage was met, a value may still be served: the
    // right one.
    if (*got != nullptr) {
      EXPECT_EQ(**got, records_[i]) << "k" << i;
    }
  }
  EXPECT_EQ(store->Stats().corrupt_dropped, 1);
  EXPECT_EQ(store->Stats().artifact_entries, 0);
  EXPECT_EQ(store->Stats().artifact_bytes, 0);
  // The cleared family's files go with its last handle, not at close.
  EXPECT_FALSE(std::filesystem::exists(sst)) << sst;
  // EvictAll compacts every family: the damaged file must be out of reach.
  absl::StatusOr<int64_t> evicted = store->EvictAll();
  ASSERT_TRUE(evicted.ok()) << evicted.status();
  EXPECT_EQ(store->Stats().corrupt_dropped, 1);
  ExpectTheCacheWorksOn(std::move(store));
}

// Many readers meet the damage at once: one clear, counted once, and a value
// stored after it survives every reader that was still on the old files.
TEST_F(DamagedStoreTest, ConcurrentReadsMeetingTheDamageClearOnce) {
  const std::string sst = StoreThreeInAnSst();
  ASSERT_FALSE(sst.empty());
  auto store = Open();
  ASSERT_NE(store, nullptr);
  cache_test::FlipByteInside(sst);

  std::vector<std::thread> readers;
  for (int t = 0; t < 6; ++t) {
    readers.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        const int i = (t + round) % 3;
        auto got = store->GetArtifact(absl::StrCat("k", i));
        EXPECT_TRUE(got.ok()) << got.status();
        if (got.ok() && *got != nullptr) {
          EXPECT_EQ(**got, records_[i]);
        }
      }
    });
  }
  const ArtifactRecord fresh = RandomArtifact(rng_, 1000);
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (store->Stats().corrupt_dropped == 0 &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  EXPECT_EQ(store->Stats().corrupt_dropped, 1) << "no reader met the damage";
  EXPECT_TRUE(store->PutArtifact("fresh", fresh).ok());
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(store->Stats().corrupt_dropped, 1);
  auto got = store->GetArtifact("fresh");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_NE(*got, nullptr) << "a second clear lost an entry stored after the "
                              "first";
  EXPECT_EQ((*got)->cubin, fresh.cubin);
}

// The same damage met first by a compaction (here EvictAll's): RocksDB would
// refuse every later write until a reopen. The store's damage thread clears
// the cache (asynchronously: the test waits for it) and writes go on.
TEST_F(DamagedStoreTest, DamageFoundByACompactionClearsTheCacheAndWritesGoOn) {
  const std::string sst = StoreThreeInAnSst();
  ASSERT_FALSE(sst.empty());
  auto store = Open();
  ASSERT_NE(store, nullptr);
  cache_test::FlipByteInside(sst);

  absl::StatusOr<int64_t> evicted = store->EvictAll();
  ASSERT_TRUE(evicted.ok()) << evicted.status();
  EXPECT_EQ(*evicted, 3);
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (store->Stats().corrupt_dropped == 0 &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(store->Stats().corrupt_dropped, 1);
  for (int i = 0; i < 3; ++i) {
    auto got = store->GetArtifact(absl::StrCat("k", i));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, nullptr) << "k" << i;
  }
  ExpectTheCacheWorksOn(std::move(store));
}

// An SST cut short (a partial copy, a lost tail): RocksDB refuses to open the
// directory. The store clears it and starts empty instead of keeping the
// daemon from starting.
TEST_F(DamagedStoreTest, SstCutShortIsClearedAtOpen) {
  const std::string sst = StoreThreeInAnSst();
  ASSERT_FALSE(sst.empty());
  cache_test::TruncateToHalf(sst);
  ExpectTheOpenClearsIt();
}

// A flipped byte inside an SST data block, before the open: RocksDB opens the
// directory, the open scan reads every artifact, meets the block and clears
// the directory.
TEST_F(DamagedStoreTest, FlippedByteIsClearedAtOpen) {
  const std::string sst = StoreThreeInAnSst();
  ASSERT_FALSE(sst.empty());
  cache_test::FlipByteInside(sst);
  ExpectTheOpenClearsIt();
}

// With less free disk than the cache keeps in reserve, only growth is
// refused: evicting, pinning and the open's own clean-up (a lowered
// max_bytes) are how an operator frees space, so they work.
TEST_F(DamagedStoreTest, ANearlyFullDiskRefusesGrowthOnly) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    for (const char* key : {"A", "B", "C", "D"}) {
      ASSERT_TRUE(store->PutArtifact(key, RandomArtifact(rng_, 3000)).ok());
    }
  }
  options_.min_free_disk_bytes = int64_t{1} << 60;  // more than any disk
  const int64_t one_value_bytes = [&] {
    auto store = Open();
    return store == nullptr ? 0 : store->Stats().artifact_bytes / 4;
  }();
  ASSERT_GT(one_value_bytes, 3000);
  options_.max_bytes = 3 * one_value_bytes;  // the open evicts one

  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Stats().evictions, 1);
  EXPECT_EQ(store->Stats().artifact_entries, 3);
  const absl::Status grow = store->PutArtifact("E", RandomArtifact(rng_, 3000));
  EXPECT_EQ(grow.code(), absl::StatusCode::kResourceExhausted) << grow;
  EXPECT_EQ(store->PutPlan("p", cache_test::RandomPlan(rng_, 2)).code(),
            absl::StatusCode::kResourceExhausted);

  absl::StatusOr<std::vector<ArtifactListing>> listings =
      store->ListArtifacts();
  ASSERT_TRUE(listings.ok()) << listings.status();
  std::vector<std::string> kept;
  for (const ArtifactListing& listing : *listings) kept.push_back(listing.key);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_TRUE(store->SetPinned(kept[0], true).ok());
  EXPECT_TRUE(store->SetPinned(kept[0], false).ok());
  EXPECT_TRUE(store->EvictArtifact(kept[1]).ok());
  absl::StatusOr<int64_t> evicted = store->EvictAll();
  ASSERT_TRUE(evicted.ok()) << evicted.status();
  EXPECT_EQ(*evicted, 2);
  EXPECT_EQ(store->Stats().artifact_entries, 0);
}

}  // namespace
}  // namespace hummingd
