#pragma once

// The fixture the RocksDB store tests share: a fresh directory, a seeded
// generator (the seed is printed on failure) and the store opened on it.

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "absl/status/statusor.h"
#include "cache/kernel_store.h"
#include "cache_test_util.h"
#include "common/hashing.h"
#include "gtest/gtest.h"

namespace hummingd::cache_test {

class StoreTest : public ::testing::Test {
 protected:
  StoreTest() : seed_(FreshSeed()), rng_(seed_) {}

  void SetUp() override { options_.directory = dir_.Sub("cache"); }

  std::unique_ptr<KernelStore> Open() {
    absl::StatusOr<std::unique_ptr<KernelStore>> store =
        OpenRocksStore(options_);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  // What the store returns for a record it was given (it fills the checksum).
  static ArtifactRecord Stored(ArtifactRecord record) {
    record.cubin_checksum = Checksum64(record.cubin);
    return record;
  }

  static bool Has(KernelStore& store, const std::string& key) {
    absl::StatusOr<std::shared_ptr<const ArtifactRecord>> got =
        store.GetArtifact(key);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() && *got != nullptr;
  }

  const uint64_t seed_;
  std::mt19937_64 rng_;
  TempDir dir_;
  RocksStoreOptions options_;
  ::testing::ScopedTrace trace_{__FILE__, __LINE__,
                                ::testing::Message() << "seed=" << seed_};
};

}  // namespace hummingd::cache_test
