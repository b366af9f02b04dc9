// Many readers and a few writers on one store: every value served must be the
// exact value stored under its key, and the byte bound must hold throughout.

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cache/kernel_store.h"
#include "cache_test_util.h"
#include "common/hashing.h"
#include "gtest/gtest.h"

namespace hummingd {
namespace {

// The cubin is a pure function of the key, so any reader can check what it
// got without sharing state with the writers.
ArtifactRecord ArtifactFor(int id) {
  std::mt19937_64 rng(0x5eed0000u + static_cast<uint64_t>(id));
  ArtifactRecord record =
      cache_test::RandomArtifact(rng, 4000 + static_cast<size_t>(id % 7) * 500);
  record.description = absl::StrCat("artifact ", id);
  return record;
}

std::string KeyFor(int id) { return absl::StrCat("key-", id); }

TEST(StoreConcurrencyTest, EightThreadsReadWriteEvictAndPin) {
  const uint64_t seed = cache_test::FreshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  cache_test::TempDir dir;
  RocksStoreOptions options;
  options.directory = dir.Sub("cache");
  options.max_bytes = 20 * 8000;  // forces evictions among 48 keys
  options.memory_tier_bytes = 8 * 8000;
  auto opened = OpenRocksStore(options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  KernelStore& store = **opened;

  constexpr int kKeys = 48;
  for (int id = 0; id < 16; ++id) {
    ASSERT_TRUE(store.PutArtifact(KeyFor(id), ArtifactFor(id)).ok());
  }

  std::atomic<int64_t> gets{0};
  std::atomic<int64_t> hits{0};
  std::atomic<int> failures{0};
  std::atomic<bool> over_bound{false};
  auto fail = [&](const std::string& what) {
    if (failures.fetch_add(1) < 5) ADD_FAILURE() << what;
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < 5; ++t) {  // readers
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(seed + static_cast<uint64_t>(t));
      for (int i = 0; i < 1500; ++i) {
        const int id = static_cast<int>(rng() % kKeys);
        auto got = store.GetArtifact(KeyFor(id));
        gets.fetch_add(1);
        if (!got.ok()) {
          fail(absl::StrCat("get: ", got.status().ToString()));
          continue;
        }
        if (*got == nullptr) continue;
        hits.fetch_add(1);
        const ArtifactRecord expected = ArtifactFor(id);
        if ((*got)->cubin != expected.cubin ||
            (*got)->description != expected.description ||
            (*got)->cubin_checksum != Checksum64(expected.cubin)) {
          fail(absl::StrCat("wrong value served for ", KeyFor(id)));
        }
      }
    });
  }
  for (int t = 0; t < 2; ++t) {  // writers
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(seed + 100 + static_cast<uint64_t>(t));
      for (int i = 0; i < 40; ++i) {
        const int id = static_cast<int>(rng() % kKeys);
        absl::Status status = store.PutArtifact(KeyFor(id), ArtifactFor(id));
        // Only pins can make a put fail, and pins stay few below.
        if (!status.ok() &&
            status.code() != absl::StatusCode::kResourceExhausted) {
          fail(absl::StrCat("put: ", status.ToString()));
        }
        if (store.Stats().artifact_bytes > options.max_bytes) over_bound = true;
      }
    });
  }
  threads.emplace_back([&] {  // maintenance: evict, pin, list, plans
    std::mt19937_64 rng(seed + 200);
    for (int i = 0; i < 60; ++i) {
      const int id = static_cast<int>(rng() % kKeys);
      switch (i % 4) {
        case 0: {
          absl::Status status = store.EvictArtifact(KeyFor(id));
          if (!status.ok() && status.code() != absl::StatusCode::kNotFound) {
            fail(absl::StrCat("evict: ", status.ToString()));
          }
          break;
        }
        case 1: {
          absl::Status status = store.SetPinned(KeyFor(id % 4), i % 8 == 1);
          if (!status.ok() && status.code() != absl::StatusCode::kNotFound) {
            fail(absl::StrCat("pin: ", status.ToString()));
          }
          break;
        }
        case 2: {
          auto listing = store.ListArtifacts();
          if (!listing.ok()) fail("list failed");
          break;
        }
        default: {
          PlanRecord plan = cache_test::RandomPlan(rng, 2);
          if (!store.PutPlan(absl::StrCat("plan-", id), plan).ok()) {
            fail("put plan failed");
          }
          auto got = store.GetPlan(absl::StrCat("plan-", id));
          if (!got.ok() || !got->has_value()) fail("get plan failed");
          break;
        }
      }
    }
  });
  for (std::thread& thread : threads) thread.join();

  EXPECT_EQ(failures.load(), 0);
  EXPECT_FALSE(over_bound.load());
  const StoreStats stats = store.Stats();
  EXPECT_LE(stats.artifact_bytes, options.max_bytes);
  EXPECT_EQ(stats.artifact_hits, hits.load());
  EXPECT_EQ(stats.artifact_hits + stats.artifact_misses, gets.load());
  EXPECT_LE(stats.memory_hits, stats.artifact_hits);
  EXPECT_GT(stats.memory_hits, 0);
  EXPECT_GT(stats.evictions, 0);
  EXPECT_EQ(stats.corrupt_dropped, 0);
  auto listing = store.ListArtifacts();
  ASSERT_TRUE(listing.ok());
  EXPECT_EQ(static_cast<int64_t>(listing->size()), stats.artifact_entries);
  int64_t listed_bytes = 0;
  for (const ArtifactListing& entry : *listing) listed_bytes += entry.bytes;
  EXPECT_EQ(listed_bytes, stats.artifact_bytes);
}

}  // namespace
}  // namespace hummingd
