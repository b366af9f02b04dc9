#pragma once

// The RocksDB KernelStore (OpenRocksStore in kernel_store.h). Internal to
// cache/: everything outside uses the KernelStore interface.
//
// Locking: `write_mu_` serializes every mutation of the disk state and is held
// across RocksDB writes; `mu_` guards the in-memory state (index, memory
// tiers) and is only held for short, allocation-light sections. Readers never
// take `write_mu_` (but to clear damage they met), so a synced Put never
// blocks the hit path. `families_mu_` is held shared by every use of a
// column family handle outside `write_mu_` (disk reads, EvictAll's
// compactions) and exclusively while a clear replaces the handles. Order:
// write_mu_, then families_mu_, then mu_.
//
// Damage (RocksDB's block checksums failing) found after open, by a read or
// by a compaction (CompactionDamageListener, answered by the store's damage
// thread), clears the whole cache as damage found at open does: the column
// families are dropped and recreated, and the old handles destroyed once no
// reader holds them, which deletes their files.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "cache/damage_listener.h"
#include "cache/kernel_store.h"
#include "cache/lru_index.h"
#include "cache/memory_tier.h"
#include "rocksdb/db.h"

namespace hummingd::cache_internal {

class RocksStore final : public KernelStore {
 public:
  static absl::StatusOr<std::unique_ptr<KernelStore>> Open(
      const RocksStoreOptions& options);
  ~RocksStore() override;

  absl::StatusOr<std::optional<PlanRecord>> GetPlan(
      std::string_view key) override;
  absl::Status PutPlan(std::string_view key, const PlanRecord& record) override;
  absl::StatusOr<std::shared_ptr<const ArtifactRecord>> GetArtifact(
      std::string_view key) override;
  absl::Status PutArtifact(std::string_view key,
                           ArtifactRecord record) override;
  absl::Status EvictArtifact(std::string_view key) override;
  absl::StatusOr<int64_t> EvictAll() override;
  absl::Status SetPinned(std::string_view key, bool pinned) override;
  absl::StatusOr<std::vector<ArtifactListing>> ListArtifacts() override;
  StoreStats Stats() override;

 private:
  struct Counters {
    std::atomic<int64_t> plan_hits{0};
    std::atomic<int64_t> plan_misses{0};
    std::atomic<int64_t> artifact_hits{0};
    std::atomic<int64_t> artifact_misses{0};
    std::atomic<int64_t> memory_hits{0};
    std::atomic<int64_t> corrupt_dropped{0};
    std::atomic<int64_t> evictions{0};
  };
  enum class Family { kPlans, kArtifacts };

  // An flock(2) on <directory>/hummingd.lock, held for the store's life:
  // it is taken before RocksDB opens (so clearing a directory RocksDB
  // cannot open never races a second daemon) and never unlinked.
  class DirectoryLock {
   public:
    static absl::StatusOr<DirectoryLock> Acquire(const std::string& directory);
    DirectoryLock(DirectoryLock&& other) noexcept;
    DirectoryLock& operator=(DirectoryLock&&) = delete;
    ~DirectoryLock();

   private:
    explicit DirectoryLock(int fd) : fd_(fd) {}
    int fd_ = -1;
  };

  RocksStore(const RocksStoreOptions& options, DirectoryLock directory_lock,
             std::unique_ptr<rocksdb::DB> db,
             std::vector<rocksdb::ColumnFamilyHandle*> handles,
             std::shared_ptr<CompactionDamageListener> damage_listener);

  // --- open (rocks_store_open.cc); run before the store is shared ---------
  absl::Status Recover();
  absl::Status CheckSchemaVersion() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status WriteSchemaMarker() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status RecreateFamilies() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status LoadIndex() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status EnforceByteBound() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  rocksdb::ColumnFamilyHandle* Handle(const std::string& name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  // --- shared helpers (rocks_store.cc) ------------------------------------
  absl::Status Write(rocksdb::WriteBatch& batch, bool sync,
                     std::string_view operation);
  // RESOURCE_EXHAUSTED when a write of `bytes` would leave less than
  // `reserve_bytes` (plus a margin of 3x the write) free on the disk.
  absl::Status CheckDiskSpace(size_t bytes, int64_t reserve_bytes,
                              std::string_view operation) const;
  absl::Status Rocks(const rocksdb::Status& status,
                     std::string_view operation) const;
  // Deletes `key` if it still holds exactly `observed` (a concurrent Put may
  // have replaced it): a value whose own envelope or cubin checksum failed.
  // Counts and logs it once the delete is durable.
  void DropCorrupt(Family family, std::string_view key,
                   std::string_view observed, const absl::Status& reason)
      ABSL_LOCKS_EXCLUDED(write_mu_, families_mu_, mu_);
  // Reads and decodes `key` of `family` from disk: nullopt for a miss,
  // including a value met damaged (the cache is cleared: ClearDamagedCache)
  // or one that does not decode (dropped: DropCorrupt); other RocksDB errors
  // as they are.
  template <class Record>
  absl::StatusOr<std::optional<Record>> ReadStored(
      Family family, std::string_view key, const rocksdb::ReadOptions& read,
      absl::StatusOr<Record> (*decode)(std::string_view),
      std::string_view operation)
      ABSL_LOCKS_EXCLUDED(write_mu_, families_mu_, mu_);
  // A read of `key` in `family` at handle generation `generation` met damaged
  // files (`why`). Clears the cache (ClearCache) unless the families were
  // replaced since (a concurrent reader met the same damage: fresh entries
  // are never lost to a second clear) or a second read of the key succeeds
  // (a transient error is not damage).
  void ClearDamagedCache(Family family, std::string_view key,
                         uint64_t generation, const absl::Status& why)
      ABSL_LOCKS_EXCLUDED(write_mu_, families_mu_, mu_);
  // Empties the cache: every family dropped and recreated, the index and
  // memory tiers cleared; counted once in corrupt_dropped when it succeeds.
  // A failed recreate leaves the store unusable for writes (CheckUsable).
  absl::Status ClearCache(absl::string_view why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // The damage thread: clears the cache for compaction reports about a live
  // family, until the listener stops.
  void WatchForDamage() ABSL_LOCKS_EXCLUDED(write_mu_);
  void ClearForCompactionReports(
      const std::vector<CompactionDamageListener::Report>& reports)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // UNAVAILABLE for every mutation once a clear could not recreate the
  // families (writes would land in a dropped family and stop RocksDB).
  absl::Status CheckUsable() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Persists access ticks with an unsynced write: losing them on a crash
  // only makes the eviction order slightly stale.
  void FlushTicks() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void MaybeFlushTicks(int64_t dirty_count);
  void AddDirtyTicks(rocksdb::WriteBatch& batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void DeleteArtifactInBatch(rocksdb::WriteBatch& batch, std::string_view key);

  rocksdb::ColumnFamilyHandle* plans() const {
    return plans_.load(std::memory_order_acquire);
  }
  rocksdb::ColumnFamilyHandle* artifacts() const {
    return artifacts_.load(std::memory_order_acquire);
  }
  rocksdb::ColumnFamilyHandle* meta() const {
    return meta_.load(std::memory_order_acquire);
  }

  const RocksStoreOptions options_;
  const DirectoryLock directory_lock_;
  std::unique_ptr<rocksdb::DB> db_;
  const std::shared_ptr<CompactionDamageListener> damage_listener_;
  std::thread damage_watcher_;

  absl::Mutex write_mu_;
  // Every handle, owned; the families below point into it.
  std::vector<rocksdb::ColumnFamilyHandle*> handles_ ABSL_GUARDED_BY(write_mu_);
  bool unusable_ ABSL_GUARDED_BY(write_mu_) = false;
  absl::Mutex families_mu_ ABSL_ACQUIRED_AFTER(write_mu_);
  // Bumped by every clear: a reader's damage report names the generation it
  // read.
  uint64_t generation_ ABSL_GUARDED_BY(families_mu_) = 0;
  // Loaded under families_mu_ (shared) or write_mu_; replaced under both.
  std::atomic<rocksdb::ColumnFamilyHandle*> plans_{nullptr};
  std::atomic<rocksdb::ColumnFamilyHandle*> artifacts_{nullptr};
  std::atomic<rocksdb::ColumnFamilyHandle*> meta_{nullptr};
  absl::Mutex mu_ ABSL_ACQUIRED_AFTER(families_mu_);
  LruIndex index_ ABSL_GUARDED_BY(mu_);
  MemoryTier<ArtifactRecord> artifact_memory_ ABSL_GUARDED_BY(mu_);
  MemoryTier<PlanRecord> plan_memory_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> plan_keys_ ABSL_GUARDED_BY(mu_);
  Counters counters_;
  std::atomic<int64_t> last_tick_flush_ns_;  // steady clock
};

// Key of an artifact's bookkeeping entry in the "meta" family.
std::string ArtifactMetaKey(std::string_view artifact_key);
inline constexpr char kSchemaMarkerKey[] = "schema_version";

}  // namespace hummingd::cache_internal
