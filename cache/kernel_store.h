#pragma once

// KernelStore: the persistent cache of plans and artifacts. Values are
// checksummed and verified on every read from disk; a corrupt value is
// dropped, counted and reported as a miss so the caller recompiles — it is
// never returned.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cache/records.h"

namespace hummingd {

struct StoreStats {
  int64_t plan_hits = 0;
  int64_t plan_misses = 0;
  int64_t artifact_hits = 0;  // memory or disk
  int64_t artifact_misses = 0;
  int64_t memory_hits = 0;       // subset of artifact_hits served from memory
  int64_t corrupt_dropped = 0;   // values that failed verification
  int64_t evictions = 0;         // artifacts removed to honour max_bytes
  int64_t artifact_entries = 0;  // artifacts on disk now
  int64_t artifact_bytes = 0;    // sum of stored artifact value sizes now
  int64_t plan_entries = 0;
  int64_t max_bytes = 0;
};

struct ArtifactListing {
  std::string key;
  std::string entry;
  std::string arch;
  std::string description;
  int64_t bytes = 0;  // stored value size
  double compile_ms = 0;
  bool pinned = false;
};

class KernelStore {
 public:
  virtual ~KernelStore() = default;

  // nullopt on a miss (including a value that failed verification).
  virtual absl::StatusOr<std::optional<PlanRecord>> GetPlan(
      std::string_view key) = 0;
  virtual absl::Status PutPlan(std::string_view key,
                               const PlanRecord& record) = 0;

  virtual absl::StatusOr<std::shared_ptr<const ArtifactRecord>> GetArtifact(
      std::string_view key) = 0;  // nullptr on a miss
  // Durable when it returns OK (synced write); may evict least-recently-used
  // unpinned artifacts to stay under max_bytes.
  virtual absl::Status PutArtifact(std::string_view key,
                                   ArtifactRecord record) = 0;

  // Removes one artifact (NOT_FOUND if absent) / every entry.
  virtual absl::Status EvictArtifact(std::string_view key) = 0;
  // Removes every artifact (pinned ones too) and every plan; returns how many
  // artifacts it removed.
  virtual absl::StatusOr<int64_t> EvictAll() = 0;
  // Pinned artifacts are never evicted to honour max_bytes (NOT_FOUND if
  // absent). A Put that cannot fit beside the pinned ones is
  // RESOURCE_EXHAUSTED.
  virtual absl::Status SetPinned(std::string_view key, bool pinned) = 0;

  virtual absl::StatusOr<std::vector<ArtifactListing>> ListArtifacts() = 0;
  virtual StoreStats Stats() = 0;
};

struct RocksStoreOptions {
  std::string directory;
  int64_t max_bytes = int64_t{4} << 30;            // artifact bytes on disk
  int64_t memory_tier_bytes = int64_t{256} << 20;  // in-memory front tier
  // Writes are refused (RESOURCE_EXHAUSTED) while the file system holding the
  // directory has less free space than this plus a few times the write:
  // RocksDB must never meet a full disk (the packaged build aborts on a
  // failed write's assertion), and flushes and compactions need headroom.
  int64_t min_free_disk_bytes = int64_t{128} << 20;
};

// Opens (creating if needed) the RocksDB store. FAILED_PRECONDITION with a
// clear message when another process holds the directory.
absl::StatusOr<std::unique_ptr<KernelStore>> OpenRocksStore(
    const RocksStoreOptions& options);

}  // namespace hummingd
