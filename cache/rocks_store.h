#pragma once

// The RocksDB KernelStore (OpenRocksStore in kernel_store.h). Internal to
// cache/: everything outside uses the KernelStore interface.
//
// Locking: `write_mu_` serializes every mutation of the disk state and is held
// across RocksDB writes; `mu_` guards the in-memory state (index, memory
// tiers) and is only held for short, allocation-light sections. Readers never
// take `write_mu_`, so a synced Put never blocks the hit path. Order:
// write_mu_ before mu_.
//
// Damage (RocksDB's block checksums failing) found after open, by a read or
// by a compaction (CompactionDamageListener), clears the whole cache as damage
// found at open does: the column families are dropped and recreated. Readers
// load the family handles without a lock, so the dropped ones stay alive (and
// readable) until close.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

  RocksStore(const RocksStoreOptions& options, std::unique_ptr<rocksdb::DB> db,
             std::vector<rocksdb::ColumnFamilyHandle*> handles,
             std::shared_ptr<CompactionDamageListener> damage_listener);

  // --- open (rocks_store_open.cc); run before the store is shared ---------
  absl::Status Recover();
  absl::Status CheckSchemaVersion() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status WriteSchemaMarker() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status RecreateFamilies() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void DestroyRetiredHandles() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status LoadIndex() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status EnforceByteBound() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  rocksdb::ColumnFamilyHandle* Handle(const std::string& name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  // --- shared helpers (rocks_store.cc) ------------------------------------
  absl::Status Write(rocksdb::WriteBatch& batch, bool sync,
                     std::string_view operation);
  // RESOURCE_EXHAUSTED when the disk is too full for a write of `bytes`.
  absl::Status CheckDiskSpace(size_t bytes, std::string_view operation) const;
  absl::Status Rocks(const rocksdb::Status& status,
                     std::string_view operation) const;
  // Deletes `key` if it still holds exactly `observed` (a concurrent Put may
  // have replaced it): a value whose own envelope or cubin checksum failed.
  // Counts and logs it once the delete is durable.
  void DropCorrupt(Family family, std::string_view key,
                   std::string_view observed, const absl::Status& reason);
  // Empties the cache (every family dropped and recreated, the index and
  // memory tiers cleared) because a read of `family` met damaged files: `why`
  // says how. Nothing happens when `family` was already cleared meanwhile (a
  // concurrent read met the same damage), so fresh entries are never lost to
  // a second clear. Counted once in corrupt_dropped.
  void ClearDamagedCache(rocksdb::ColumnFamilyHandle* family,
                         const absl::Status& why);
  absl::Status ClearCache(absl::string_view why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Before a mutation: clears the cache if a compaction found damage that is
  // still in the live families (VerifyChecksum: the damaged file may belong
  // to a family a read already cleared).
  void ClearIfCompactionFoundDamage() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
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
  std::unique_ptr<rocksdb::DB> db_;
  const std::shared_ptr<CompactionDamageListener> damage_listener_;

  absl::Mutex write_mu_;
  // Every live handle, owned; the families below point into it.
  std::vector<rocksdb::ColumnFamilyHandle*> handles_ ABSL_GUARDED_BY(write_mu_);
  // Handles of dropped families, owned: a reader may still be using one.
  std::vector<rocksdb::ColumnFamilyHandle*> retired_handles_
      ABSL_GUARDED_BY(write_mu_);
  std::atomic<rocksdb::ColumnFamilyHandle*> plans_{nullptr};
  std::atomic<rocksdb::ColumnFamilyHandle*> artifacts_{nullptr};
  std::atomic<rocksdb::ColumnFamilyHandle*> meta_{nullptr};
  absl::Mutex mu_ ABSL_ACQUIRED_AFTER(write_mu_);
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
