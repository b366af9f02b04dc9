// Corrupt values and kill -9: nothing corrupt is ever served, and committed
// work survives.

#include <chrono>
#include <thread>
#include <vector>

#include "common/hashing.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "tests/integration/daemon_test_util.h"

namespace hummingd::testing {
namespace {

class CrashRecoveryTest : public DaemonTest {};

// Opens the daemon's RocksDB directory directly (the daemon must be stopped)
// and flips one byte in the middle of every value of the "artifacts" column
// family. Returns how many values it changed.
int FlipOneByteInEveryArtifact(const std::string& cache_dir) {
  std::vector<std::string> families;
  rocksdb::Status status = rocksdb::DB::ListColumnFamilies(
      rocksdb::DBOptions(), cache_dir, &families);
  EXPECT_TRUE(status.ok()) << status.ToString();
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : families) {
    descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw_db = nullptr;
  status = rocksdb::DB::Open(rocksdb::DBOptions(), cache_dir, descriptors,
                             &handles, &raw_db);
  EXPECT_TRUE(status.ok()) << status.ToString();
  if (!status.ok()) return 0;
  std::unique_ptr<rocksdb::DB> db(raw_db);
  rocksdb::ColumnFamilyHandle* artifacts = nullptr;
  for (size_t i = 0; i < families.size(); ++i) {
    if (families[i] == "artifacts") artifacts = handles[i];
  }
  EXPECT_NE(artifacts, nullptr) << "no 'artifacts' column family";
  int flipped = 0;
  if (artifacts != nullptr) {
    std::vector<std::pair<std::string, std::string>> entries;
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions(), artifacts));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      entries.emplace_back(it->key().ToString(), it->value().ToString());
    }
    for (auto& [key, value] : entries) {
      value[value.size() / 2] ^= 0x5A;
      EXPECT_TRUE(db->Put(rocksdb::WriteOptions(), artifacts, key, value).ok());
      ++flipped;
    }
  }
  for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
  EXPECT_TRUE(db->Close().ok());
  return flipped;
}

TEST_F(CrashRecoveryTest, FlippedByteIsDetectedCountedAndRecompiled) {
  std::string good_cubin;
  uint64_t good_checksum = 0;
  {
    auto daemon = StartDaemon();
    ASSERT_NE(daemon, nullptr);
    auto stub = daemon->Stub();
    v1::GetKernelsResponse response;
    ASSERT_TRUE(Get(*stub, DequantRequest(4096, 14336), &response).ok());
    good_cubin = response.kernel_set().kernels(0).cubin();
    good_checksum = response.kernel_set().kernels(0).cubin_checksum();
    ASSERT_TRUE(daemon->Stop().ok());
  }
  ASSERT_EQ(FlipOneByteInEveryArtifact(CacheDir()), 1);

  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  v1::GetKernelsResponse response;
  ASSERT_TRUE(Get(*stub, DequantRequest(4096, 14336), &response).ok());
  const v1::Kernel& kernel = response.kernel_set().kernels(0);
  EXPECT_EQ(kernel.outcome(), v1::CACHE_OUTCOME_COMPILED);
  EXPECT_EQ(kernel.cubin(), good_cubin);
  EXPECT_EQ(kernel.cubin_checksum(), good_checksum);
  EXPECT_EQ(Checksum64(kernel.cubin()), good_checksum);
  EXPECT_EQ(Counter(*stub, "corrupt_dropped"), 1);
  EXPECT_EQ(Counter(*stub, "compiles"), 1);

  // The recompiled value replaced the corrupt one: a third ask is a clean hit.
  v1::GetKernelsResponse again;
  ASSERT_TRUE(Get(*stub, DequantRequest(4096, 14336), &again).ok());
  EXPECT_EQ(again.kernel_set().kernels(0).outcome(), v1::CACHE_OUTCOME_HIT);
  EXPECT_EQ(again.kernel_set().kernels(0).cubin(), good_cubin);
}

TEST_F(CrashRecoveryTest, KillNineDuringPrefetchResumesFromCommittedWork) {
  constexpr int kLayers = 14;
  v1::PrefetchRequest prefetch;
  for (int i = 0; i < kLayers; ++i) {
    v1::KernelRequest* item = prefetch.add_requests();
    *item = DequantRequest(2048 + 64 * i, 2048).request();
    item->set_name("layer" + std::to_string(i));
  }

  int64_t committed_before_kill = 0;
  {
    auto daemon = StartDaemon({"--compile-threads", "1"});
    ASSERT_NE(daemon, nullptr);
    std::thread client([&] {
      auto stub = daemon->Stub();
      grpc::ClientContext context;
      auto reader = stub->Prefetch(&context, prefetch);
      v1::PrefetchProgress progress;
      while (reader->Read(&progress)) {
      }
      reader->Finish();  // fails once the daemon dies; that is the point
    });
    auto stub = daemon->Stub();
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (Counter(*stub, "compiles") < 3 &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_GE(Counter(*stub, "compiles"), 3);
    daemon->Kill();
    client.join();
  }

  auto daemon = StartDaemon({"--compile-threads", "2"});
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  committed_before_kill = Counter(*stub, "entries");
  EXPECT_GE(committed_before_kill, 3);
  EXPECT_LT(committed_before_kill, kLayers);

  grpc::ClientContext context;
  auto reader = stub->Prefetch(&context, prefetch);
  v1::PrefetchProgress progress;
  int items = 0, cached = 0, compiled = 0;
  while (reader->Read(&progress)) {
    EXPECT_EQ(progress.status_code(), 0) << progress.status_message();
    ++items;
    cached += progress.cached();
    compiled += progress.compiled();
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(items, kLayers);
  EXPECT_EQ(cached, committed_before_kill);
  EXPECT_EQ(compiled, kLayers - committed_before_kill);
  EXPECT_EQ(Counter(*stub, "compiles"), kLayers - committed_before_kill);
  EXPECT_EQ(Counter(*stub, "corrupt_dropped"), 0);
  EXPECT_EQ(Counter(*stub, "entries"), kLayers);

  // Every served kernel carries bytes that match their checksum field.
  for (int i = 0; i < kLayers; ++i) {
    v1::GetKernelsResponse response;
    ASSERT_TRUE(
        Get(*stub, DequantRequest(2048 + 64 * i, 2048), &response).ok());
    EXPECT_EQ(response.kernel_set().kernels(0).outcome(),
              v1::CACHE_OUTCOME_HIT);
    const v1::Kernel& kernel = response.kernel_set().kernels(0);
    EXPECT_GT(kernel.cubin().size(), 1000u);
    EXPECT_EQ(Checksum64(kernel.cubin()), kernel.cubin_checksum());
  }
}

}  // namespace
}  // namespace hummingd::testing
