#include "cache/lru_index.h"

#include <algorithm>
#include <tuple>

#include "cache/absl_view.h"

namespace hummingd::cache_internal {

void LruIndex::Upsert(std::string_view key, int64_t bytes,
                      const ArtifactMeta& meta, ArtifactSummary summary) {
  Remove(key);
  IndexedArtifact& entry = entries_[std::string(key)];
  entry.bytes = bytes;
  entry.meta = meta;
  entry.summary = std::move(summary);
  total_bytes_ += bytes;
  next_tick_ = std::max(next_tick_, meta.tick + 1);
}

const IndexedArtifact* LruIndex::Find(std::string_view key) const {
  auto it = entries_.find(ToAbsl(key));
  return it == entries_.end() ? nullptr : &it->second;
}

void LruIndex::MarkDirty(IndexedArtifact& entry) {
  if (!entry.meta_dirty) {
    entry.meta_dirty = true;
    ++dirty_count_;
  }
}

bool LruIndex::Touch(std::string_view key) {
  auto it = entries_.find(ToAbsl(key));
  if (it == entries_.end()) return false;
  it->second.meta.tick = NextTick();
  MarkDirty(it->second);
  return true;
}

bool LruIndex::SetPinned(std::string_view key, bool pinned) {
  auto it = entries_.find(ToAbsl(key));
  if (it == entries_.end()) return false;
  it->second.meta.pinned = pinned;
  return true;
}

bool LruIndex::Remove(std::string_view key) {
  auto it = entries_.find(ToAbsl(key));
  if (it == entries_.end()) return false;
  total_bytes_ -= it->second.bytes;
  if (it->second.meta_dirty) --dirty_count_;
  entries_.erase(it);
  return true;
}

void LruIndex::Clear() {
  entries_.clear();
  total_bytes_ = 0;
  dirty_count_ = 0;
}

VictimPlan LruIndex::PickVictims(int64_t bytes_to_free,
                                 std::string_view keep) const {
  VictimPlan plan;
  if (bytes_to_free <= 0) return plan;
  std::vector<std::tuple<uint64_t, std::string_view, int64_t>> candidates;
  for (const auto& [key, entry] : entries_) {
    if (entry.meta.pinned || key == keep) continue;
    candidates.emplace_back(entry.meta.tick, key, entry.bytes);
  }
  std::sort(candidates.begin(), candidates.end());
  for (const auto& [tick, key, bytes] : candidates) {
    if (plan.freed_bytes >= bytes_to_free) break;
    plan.keys.emplace_back(key);
    plan.freed_bytes += bytes;
  }
  return plan;
}

std::vector<std::pair<std::string, ArtifactMeta>> LruIndex::TakeDirtyMeta() {
  std::vector<std::pair<std::string, ArtifactMeta>> dirty;
  if (dirty_count_ == 0) return dirty;
  dirty.reserve(dirty_count_);
  for (auto& [key, entry] : entries_) {
    if (!entry.meta_dirty) continue;
    entry.meta_dirty = false;
    dirty.emplace_back(key, entry.meta);
  }
  dirty_count_ = 0;
  return dirty;
}

}  // namespace hummingd::cache_internal
