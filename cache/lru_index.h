#pragma once

// In-memory index of the artifacts on disk: size, last-access tick, pinned
// flag and listing fields. Built at open, kept exact by the store's writers,
// and the only thing the byte bound and eviction order are computed from.
// Touch() is O(1) without allocation because it sits on the hit path; the
// eviction order is only sorted when a Put has to evict. Not synchronized.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "cache/record_codec.h"

namespace hummingd::cache_internal {

struct IndexedArtifact {
  int64_t bytes = 0;  // stored value size
  ArtifactMeta meta;
  bool meta_dirty = false;  // tick newer than the persisted one
  ArtifactSummary summary;
};

struct VictimPlan {
  std::vector<std::string> keys;  // least recently used first
  int64_t freed_bytes = 0;
};

class LruIndex {
 public:
  // A tick larger than every tick handed out or loaded so far.
  uint64_t NextTick() { return next_tick_++; }

  // Inserts or replaces; `meta.tick` may come from disk (open) or NextTick().
  void Upsert(std::string_view key, int64_t bytes, const ArtifactMeta& meta,
              ArtifactSummary summary);
  const IndexedArtifact* Find(std::string_view key) const;
  // Records an access (marks the tick for a later, unsynced persist).
  bool Touch(std::string_view key);
  bool SetPinned(std::string_view key, bool pinned);
  bool Remove(std::string_view key);
  void Clear();

  // Unpinned artifacts other than `keep`, least recently used first (ties by
  // key), until at least `bytes_to_free` would be freed or none are left.
  VictimPlan PickVictims(int64_t bytes_to_free, std::string_view keep) const;

  // The metadata of every artifact touched since the last call.
  std::vector<std::pair<std::string, ArtifactMeta>> TakeDirtyMeta();
  int64_t dirty_count() const { return dirty_count_; }

  int64_t total_bytes() const { return total_bytes_; }
  int64_t size() const { return static_cast<int64_t>(entries_.size()); }
  const absl::flat_hash_map<std::string, IndexedArtifact>& entries() const {
    return entries_;
  }

 private:
  void MarkDirty(IndexedArtifact& entry);

  absl::flat_hash_map<std::string, IndexedArtifact> entries_;
  int64_t total_bytes_ = 0;
  int64_t dirty_count_ = 0;
  uint64_t next_tick_ = 1;
};

}  // namespace hummingd::cache_internal
