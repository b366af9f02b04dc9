#include "cache/rocks_store.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cache/absl_view.h"
#include "cache/record_codec.h"
#include "cache/rocks_status.h"
#include "common/hashing.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "rocksdb/write_batch.h"

namespace hummingd::cache_internal {
namespace {

// Decoded plans are small; a fixed budget keeps thousands of them.
constexpr int64_t kPlanMemoryBytes = int64_t{8} << 20;
// Access ticks are written back with the next write, at close, and from the
// hit path once this many artifacts were touched or this long has passed.
constexpr int64_t kTickFlushThreshold = 1024;
constexpr int64_t kTickFlushIntervalNs = int64_t{30} * 1000 * 1000 * 1000;

int64_t MonotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// Free disk every write leaves (see Write), unless the configured margin is
// smaller.
constexpr int64_t kWriteFloorBytes = int64_t{4} << 20;
// The value envelope stores a 32-bit payload length.
constexpr int64_t kMaxArtifactBytes = int64_t{1} << 30;

absl::Status CheckKey(std::string_view key) {
  if (key.empty()) return absl::InvalidArgumentError("key: must not be empty");
  return absl::OkStatus();
}

int64_t Charge(const ArtifactRecord& record) {
  return static_cast<int64_t>(sizeof(ArtifactRecord) + record.cubin.size() +
                              record.entry.size() + record.toolchain.size() +
                              record.arch.size() + record.description.size());
}

int64_t Charge(const PlanRecord& record) {
  int64_t charge = sizeof(PlanRecord) + record.description.size();
  for (const auto* entries : {&record.entries, &record.prepare}) {
    for (const PlanRecordEntry& entry : *entries) {
      charge += sizeof(PlanRecordEntry) + entry.role.size() +
                entry.artifact_key.size() + entry.config.skeleton.size() +
                entry.config.text.size();
    }
  }
  return charge;
}

rocksdb::ReadOptions ArtifactReadOptions() {
  rocksdb::ReadOptions read;
  read.verify_checksums = true;
  // The memory tier holds decoded artifacts; caching their blocks too would
  // only push index and filter blocks out of the small block cache.
  read.fill_cache = false;
  return read;
}

}  // namespace

std::string ArtifactMetaKey(std::string_view artifact_key) {
  return absl::StrCat("artifact/", ToAbsl(artifact_key));
}

RocksStore::RocksStore(
    const RocksStoreOptions& options, DirectoryLock directory_lock,
    std::unique_ptr<rocksdb::DB> db,
    std::vector<rocksdb::ColumnFamilyHandle*> handles,
    std::shared_ptr<CompactionDamageListener> damage_listener)
    : options_(options),
      directory_lock_(std::move(directory_lock)),
      db_(std::move(db)),
      damage_listener_(std::move(damage_listener)),
      handles_(std::move(handles)),
      artifact_memory_(options.memory_tier_bytes),
      plan_memory_(kPlanMemoryBytes),
      last_tick_flush_ns_(MonotonicNs()) {}

RocksStore::~RocksStore() {
  damage_listener_->Stop();
  if (damage_watcher_.joinable()) damage_watcher_.join();
  {
    absl::MutexLock write_lock(&write_mu_);
    FlushTicks();
  }
  rocksdb::Status status = db_->SyncWAL();
  if (!status.ok()) {
    log::Warn(absl::StrCat("cache: close: wal sync failed dir=",
                           options_.directory, " error=", status.ToString()));
  }
  {
    absl::MutexLock write_lock(&write_mu_);
    for (rocksdb::ColumnFamilyHandle* handle : handles_) {
      db_->DestroyColumnFamilyHandle(handle);
    }
    handles_.clear();
  }
  status = db_->Close();
  if (!status.ok()) {
    log::Warn(absl::StrCat("cache: close failed dir=", options_.directory,
                           " error=", status.ToString()));
  }
  db_.reset();
}

absl::Status RocksStore::Rocks(const rocksdb::Status& status,
                               std::string_view operation) const {
  return FromRocksStatus(status, operation, options_.directory);
}

absl::Status RocksStore::CheckDiskSpace(size_t bytes, int64_t reserve_bytes,
                                        std::string_view operation) const {
  struct statvfs fs {};
  if (statvfs(options_.directory.c_str(), &fs) != 0) {
    return absl::OkStatus();  // cannot tell; let RocksDB report what it finds
  }
  const uint64_t free_bytes =
      static_cast<uint64_t>(fs.f_bavail) * static_cast<uint64_t>(fs.f_frsize);
  const uint64_t needed =
      static_cast<uint64_t>(reserve_bytes) + 4 * uint64_t{bytes};
  if (free_bytes >= needed) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "cache: ", ToAbsl(operation), " refused: ", options_.directory, " has ",
      free_bytes, " bytes free and keeps at least ", needed,
      " (disk full?); the cache still serves what it holds"));
}

absl::Status RocksStore::Write(rocksdb::WriteBatch& batch, bool sync,
                               std::string_view operation) {
  // Every write keeps a small floor: the packaged RocksDB aborts when a write
  // meets a full disk. Growth keeps the configured margin (PutArtifact,
  // PutPlan); deletes and pins only this, since they are how space is freed.
  RETURN_IF_ERROR(CheckDiskSpace(
      batch.GetDataSize(),
      std::min(kWriteFloorBytes, options_.min_free_disk_bytes), operation));
  rocksdb::WriteOptions write;
  write.sync = sync;
  return Rocks(db_->Write(write, &batch), operation);
}

void RocksStore::DeleteArtifactInBatch(rocksdb::WriteBatch& batch,
                                       std::string_view key) {
  batch.Delete(artifacts(), rocksdb::Slice(key.data(), key.size()));
  batch.Delete(meta(), ArtifactMetaKey(key));
}

void RocksStore::AddDirtyTicks(rocksdb::WriteBatch& batch) {
  std::vector<std::pair<std::string, ArtifactMeta>> dirty;
  {
    absl::MutexLock lock(&mu_);
    dirty = index_.TakeDirtyMeta();
  }
  for (const auto& [key, meta] : dirty) {
    batch.Put(this->meta(), ArtifactMetaKey(key),
              EncodeArtifactMetaValue(meta));
  }
}

void RocksStore::FlushTicks() {
  last_tick_flush_ns_.store(MonotonicNs(), std::memory_order_relaxed);
  rocksdb::WriteBatch batch;
  AddDirtyTicks(batch);
  if (batch.Count() == 0) return;
  absl::Status status = Write(batch, /*sync=*/false, "persist access ticks");
  if (!status.ok()) log::Warn(absl::StrCat("cache: ", status.message()));
}

void RocksStore::MaybeFlushTicks(int64_t dirty_count) {
  if (dirty_count == 0) return;
  if (dirty_count < kTickFlushThreshold &&
      MonotonicNs() - last_tick_flush_ns_.load(std::memory_order_relaxed) <
          kTickFlushIntervalNs) {
    return;
  }
  // Never wait behind a synced Put on the hit path; the next one flushes.
  if (!write_mu_.TryLock()) return;
  FlushTicks();
  write_mu_.Unlock();
}

void RocksStore::DropCorrupt(Family family, std::string_view key,
                             std::string_view observed,
                             const absl::Status& reason) {
  const bool artifact = family == Family::kArtifacts;
  const char* family_name = artifact ? "artifacts" : "plans";
  absl::MutexLock write_lock(&write_mu_);
  rocksdb::ColumnFamilyHandle* handle = artifact ? artifacts() : plans();
  rocksdb::PinnableSlice current;
  rocksdb::Status status =
      db_->Get(rocksdb::ReadOptions(), handle,
               rocksdb::Slice(key.data(), key.size()), &current);
  // Gone, or replaced by a concurrent Put, or the whole cache was cleared.
  if (!status.ok() || current.ToStringView() != observed) return;
  rocksdb::WriteBatch batch;
  if (artifact) {
    DeleteArtifactInBatch(batch, key);
  } else {
    batch.Delete(handle, rocksdb::Slice(key.data(), key.size()));
  }
  absl::Status written = Write(batch, /*sync=*/true, "drop corrupt value");
  if (!written.ok()) {
    // The bytes are still on disk: keep them indexed (accounting and
    // EvictAll stay exact) and count them when a later read deletes them.
    log::Warn(
        absl::StrCat("cache: corrupt value not dropped family=", family_name,
                     " key=", ToAbsl(key), " reason=\"", reason.message(),
                     "\" delete_error=", written.message()));
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (artifact) {
      index_.Remove(key);
      artifact_memory_.Erase(key);
    } else {
      plan_keys_.erase(ToAbsl(key));
      plan_memory_.Erase(key);
    }
  }
  counters_.corrupt_dropped.fetch_add(1, std::memory_order_relaxed);
  log::Warn(absl::StrCat("cache: corrupt value dropped family=", family_name,
                         " key=", ToAbsl(key), " reason=\"", reason.message(),
                         "\""));
}

void RocksStore::ClearDamagedCache(Family family, std::string_view key,
                                   uint64_t generation,
                                   const absl::Status& why) {
  absl::MutexLock write_lock(&write_mu_);
  {
    absl::ReaderMutexLock families(&families_mu_);
    if (generation != generation_) return;  // cleared already
  }
  // A second read, past the block cache: a transient read error (a short
  // read on a network file system) is not worth the whole cache.
  rocksdb::ReadOptions read;
  read.verify_checksums = true;
  read.fill_cache = false;
  rocksdb::PinnableSlice value;
  const rocksdb::Status again =
      db_->Get(read, family == Family::kArtifacts ? artifacts() : plans(),
               rocksdb::Slice(key.data(), key.size()), &value);
  if (!again.IsCorruption()) {
    log::Warn(absl::StrCat("cache: a read reported damage (", why.message(),
                           ") that a second read of key=", ToAbsl(key),
                           " did not meet: ", again.ToString()));
    return;
  }
  absl::Status cleared = ClearCache(why.message());
  if (!cleared.ok()) {
    log::Error(absl::StrCat("cache: clearing dir=", options_.directory,
                            " failed: ", cleared.message()));
  }
}

void RocksStore::WatchForDamage() {
  for (;;) {
    const std::vector<CompactionDamageListener::Report> reports =
        damage_listener_->Wait();
    if (reports.empty()) return;  // stopped
    absl::MutexLock write_lock(&write_mu_);
    ClearForCompactionReports(reports);
  }
}

void RocksStore::ClearForCompactionReports(
    const std::vector<CompactionDamageListener::Report>& reports) {
  for (const CompactionDamageListener::Report& report : reports) {
    // A compaction of a family a clear already dropped (it was running when
    // the clear came) says nothing about the live files.
    const bool live = !unusable_ && (report.family_id == plans()->GetID() ||
                                     report.family_id == artifacts()->GetID() ||
                                     report.family_id == meta()->GetID());
    if (!live) {
      log::Warn(
          absl::StrCat("cache: a compaction met damage in a family "
                       "already cleared: ",
                       report.error));
      continue;
    }
    absl::Status cleared =
        ClearCache(absl::StrCat("a compaction found: ", report.error));
    if (!cleared.ok()) {
      log::Error(absl::StrCat("cache: clearing dir=", options_.directory,
                              " failed: ", cleared.message()));
    }
    return;  // the clear dropped every family the other reports name
  }
}

absl::Status RocksStore::CheckUsable() const {
  if (!unusable_) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(
      "cache: dir=", options_.directory,
      " could not be cleared after damage; restart the daemon (it clears the "
      "directory at open)"));
}

template <class Record>
absl::StatusOr<std::optional<Record>> RocksStore::ReadStored(
    Family family, std::string_view key, const rocksdb::ReadOptions& read,
    absl::StatusOr<Record> (*decode)(std::string_view),
    std::string_view operation) {
  rocksdb::Status status;
  uint64_t generation = 0;
  absl::StatusOr<Record> decoded = absl::UnknownError("not read");
  std::string undecodable;  // the bytes of a value that did not decode
  {
    // Held while the family's handle is in use: a clear destroys old ones.
    absl::ReaderMutexLock families(&families_mu_);
    generation = generation_;
    rocksdb::PinnableSlice value;
    status =
        db_->Get(read, family == Family::kArtifacts ? artifacts() : plans(),
                 rocksdb::Slice(key.data(), key.size()), &value);
    if (status.ok()) {
      decoded = decode(value.ToStringView());
      if (!decoded.ok()) undecodable = value.ToString();
    }
  }
  if (status.IsCorruption()) {  // RocksDB's own block checksum failed
    ClearDamagedCache(family, key, generation, Rocks(status, operation));
    return std::nullopt;
  }
  if (status.IsNotFound()) return std::nullopt;
  RETURN_IF_ERROR(Rocks(status, operation));
  if (!decoded.ok()) {
    DropCorrupt(family, key, undecodable, decoded.status());
    return std::nullopt;
  }
  return *std::move(decoded);
}

absl::StatusOr<std::optional<PlanRecord>> RocksStore::GetPlan(
    std::string_view key) {
  RETURN_IF_ERROR(CheckKey(key));
  std::shared_ptr<const PlanRecord> cached;
  {
    absl::MutexLock lock(&mu_);
    cached = plan_memory_.Get(key);
  }
  if (cached != nullptr) {
    counters_.plan_hits.fetch_add(1, std::memory_order_relaxed);
    return *cached;
  }
  ASSIGN_OR_RETURN(
      std::optional<PlanRecord> decoded,
      ReadStored<PlanRecord>(Family::kPlans, key, rocksdb::ReadOptions(),
                             DecodePlanValue, "get plan"));
  if (!decoded.has_value()) {
    counters_.plan_misses.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  auto shared = std::make_shared<const PlanRecord>(*std::move(decoded));
  {
    absl::MutexLock lock(&mu_);
    // Absent from plan_keys_ means EvictAll ran meanwhile: serve, don't keep.
    if (plan_keys_.contains(ToAbsl(key))) {
      plan_memory_.Put(key, shared, Charge(*shared));
    }
  }
  counters_.plan_hits.fetch_add(1, std::memory_order_relaxed);
  return *shared;
}

absl::Status RocksStore::PutPlan(std::string_view key,
                                 const PlanRecord& record) {
  RETURN_IF_ERROR(CheckKey(key));
  const std::string value = EncodePlanValue(record);
  auto shared = std::make_shared<const PlanRecord>(record);
  RETURN_IF_ERROR(
      CheckDiskSpace(value.size(), options_.min_free_disk_bytes, "put plan"));
  absl::MutexLock write_lock(&write_mu_);
  RETURN_IF_ERROR(CheckUsable());
  rocksdb::WriteBatch batch;
  batch.Put(plans(), rocksdb::Slice(key.data(), key.size()), value);
  RETURN_IF_ERROR(Write(batch, /*sync=*/true, "put plan"));
  absl::MutexLock lock(&mu_);
  plan_keys_.emplace(key);
  plan_memory_.Put(key, std::move(shared), Charge(record));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const ArtifactRecord>> RocksStore::GetArtifact(
    std::string_view key) {
  RETURN_IF_ERROR(CheckKey(key));
  std::shared_ptr<const ArtifactRecord> cached;
  int64_t dirty_count = 0;
  {
    absl::MutexLock lock(&mu_);
    cached = artifact_memory_.Get(key);
    if (cached != nullptr) {
      index_.Touch(key);
      dirty_count = index_.dirty_count();
    }
  }
  if (cached != nullptr) {
    counters_.artifact_hits.fetch_add(1, std::memory_order_relaxed);
    counters_.memory_hits.fetch_add(1, std::memory_order_relaxed);
    MaybeFlushTicks(dirty_count);
    return cached;
  }

  ASSIGN_OR_RETURN(
      std::optional<ArtifactRecord> decoded,
      ReadStored<ArtifactRecord>(Family::kArtifacts, key, ArtifactReadOptions(),
                                 DecodeArtifactValue, "get artifact"));
  if (!decoded.has_value()) {
    counters_.artifact_misses.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  auto shared = std::make_shared<const ArtifactRecord>(*std::move(decoded));
  {
    absl::MutexLock lock(&mu_);
    // Not indexed means it was evicted after our read: serve, don't keep.
    if (index_.Touch(key)) {
      artifact_memory_.Put(key, shared, Charge(*shared));
    }
    dirty_count = index_.dirty_count();
  }
  counters_.artifact_hits.fetch_add(1, std::memory_order_relaxed);
  MaybeFlushTicks(dirty_count);
  return shared;
}

absl::Status RocksStore::PutArtifact(std::string_view key,
                                     ArtifactRecord record) {
  RETURN_IF_ERROR(CheckKey(key));
  if (static_cast<int64_t>(record.cubin.size()) > kMaxArtifactBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("artifact ", ToAbsl(key), ": cubin of ",
                     record.cubin.size(), " bytes exceeds the ",
                     kMaxArtifactBytes, "-byte limit of one cache value"));
  }
  record.cubin_checksum = Checksum64(record.cubin);
  const std::string value = EncodeArtifactValue(record);
  const int64_t bytes = static_cast<int64_t>(value.size());
  if (bytes > options_.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "artifact ", ToAbsl(key), ": stored size ", bytes,
        " bytes exceeds the cache's max_bytes=", options_.max_bytes));
  }
  ArtifactSummary summary{record.entry, record.arch, record.description,
                          record.compile_ms};
  auto shared = std::make_shared<const ArtifactRecord>(std::move(record));

  // Only writes that grow the cache keep the free-space margin: deletes,
  // pins and access ticks are what an operator frees space with.
  RETURN_IF_ERROR(CheckDiskSpace(value.size(), options_.min_free_disk_bytes,
                                 "put artifact"));
  absl::MutexLock write_lock(&write_mu_);
  RETURN_IF_ERROR(CheckUsable());
  VictimPlan victims;
  ArtifactMeta meta;
  {
    absl::MutexLock lock(&mu_);
    const IndexedArtifact* existing = index_.Find(key);
    if (existing != nullptr) meta.pinned = existing->meta.pinned;
    const int64_t projected = index_.total_bytes() + bytes -
                              (existing != nullptr ? existing->bytes : 0);
    const int64_t excess = projected - options_.max_bytes;
    victims = index_.PickVictims(excess, key);
    if (victims.freed_bytes < excess) {
      return absl::ResourceExhaustedError(
          absl::StrCat("artifact ", ToAbsl(key), ": ", bytes,
                       " bytes do not fit in max_bytes=", options_.max_bytes,
                       " even after evicting every unpinned artifact ",
                       "(pinned artifacts hold the rest)"));
    }
    meta.tick = index_.NextTick();
  }

  rocksdb::WriteBatch batch;
  AddDirtyTicks(batch);  // first, so victims' deletes below win
  batch.Put(artifacts(), rocksdb::Slice(key.data(), key.size()), value);
  batch.Put(this->meta(), ArtifactMetaKey(key), EncodeArtifactMetaValue(meta));
  for (const std::string& victim : victims.keys) {
    DeleteArtifactInBatch(batch, victim);
  }
  // One synced batch: the new artifact and the evictions that make room for
  // it become durable together.
  RETURN_IF_ERROR(Write(batch, /*sync=*/true, "put artifact"));

  {
    absl::MutexLock lock(&mu_);
    for (const std::string& victim : victims.keys) {
      index_.Remove(victim);
      artifact_memory_.Erase(victim);
    }
    index_.Upsert(key, bytes, meta, std::move(summary));
    artifact_memory_.Put(key, shared, Charge(*shared));
  }
  if (!victims.keys.empty()) {
    counters_.evictions.fetch_add(static_cast<int64_t>(victims.keys.size()),
                                  std::memory_order_relaxed);
    log::Debug(absl::StrCat("cache: evicted count=", victims.keys.size(),
                            " freed_bytes=", victims.freed_bytes,
                            " for key=", ToAbsl(key)));
  }
  return absl::OkStatus();
}

absl::Status RocksStore::EvictArtifact(std::string_view key) {
  RETURN_IF_ERROR(CheckKey(key));
  absl::MutexLock write_lock(&write_mu_);
  RETURN_IF_ERROR(CheckUsable());
  {
    absl::MutexLock lock(&mu_);
    if (index_.Find(key) == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("artifact ", ToAbsl(key), ": not in the cache"));
    }
  }
  rocksdb::WriteBatch batch;
  DeleteArtifactInBatch(batch, key);
  RETURN_IF_ERROR(Write(batch, /*sync=*/true, "evict artifact"));
  absl::MutexLock lock(&mu_);
  index_.Remove(key);
  artifact_memory_.Erase(key);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> RocksStore::EvictAll() {
  std::vector<std::string> artifact_keys;
  std::vector<std::string> plan_keys;
  {
    absl::MutexLock write_lock(&write_mu_);
    RETURN_IF_ERROR(CheckUsable());
    {
      absl::MutexLock lock(&mu_);
      for (const auto& [key, entry] : index_.entries()) {
        artifact_keys.push_back(key);
      }
      plan_keys.assign(plan_keys_.begin(), plan_keys_.end());
    }
    // The index mirrors the artifacts family exactly, so deleting by its keys
    // avoids reading every stored cubin just to learn the keys.
    rocksdb::WriteBatch batch;
    for (const std::string& key : artifact_keys) {
      DeleteArtifactInBatch(batch, key);
    }
    for (const std::string& key : plan_keys) batch.Delete(plans(), key);
    RETURN_IF_ERROR(Write(batch, /*sync=*/true, "evict all"));
    {
      absl::MutexLock lock(&mu_);
      index_.Clear();
      artifact_memory_.Clear();
      plan_keys_.clear();
      plan_memory_.Clear();
    }
  }
  // Reclaim the disk space now rather than at some later compaction, without
  // the writer lock: compiles keep storing meanwhile. A compaction that meets
  // damage is answered by the damage thread, whose clear waits for these.
  absl::ReaderMutexLock families(&families_mu_);
  for (rocksdb::ColumnFamilyHandle* handle : {artifacts(), plans(), meta()}) {
    absl::Status compacted =
        Rocks(db_->CompactRange(rocksdb::CompactRangeOptions(), handle, nullptr,
                                nullptr),
              "compact after evict all");
    if (!compacted.ok()) {
      log::Warn(absl::StrCat("cache: ", compacted.message()));
    }
  }
  log::Info(absl::StrCat("cache: evicted all artifacts=", artifact_keys.size(),
                         " plans=", plan_keys.size()));
  return static_cast<int64_t>(artifact_keys.size());
}

absl::Status RocksStore::SetPinned(std::string_view key, bool pinned) {
  RETURN_IF_ERROR(CheckKey(key));
  absl::MutexLock write_lock(&write_mu_);
  RETURN_IF_ERROR(CheckUsable());
  ArtifactMeta meta;
  {
    absl::MutexLock lock(&mu_);
    const IndexedArtifact* entry = index_.Find(key);
    if (entry == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("artifact ", ToAbsl(key), ": not in the cache"));
    }
    meta = entry->meta;
  }
  meta.pinned = pinned;
  rocksdb::WriteBatch batch;
  batch.Put(this->meta(), ArtifactMetaKey(key), EncodeArtifactMetaValue(meta));
  RETURN_IF_ERROR(Write(batch, /*sync=*/true, "set pinned"));
  absl::MutexLock lock(&mu_);
  index_.SetPinned(key, pinned);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ArtifactListing>> RocksStore::ListArtifacts() {
  std::vector<ArtifactListing> listings;
  {
    absl::MutexLock lock(&mu_);
    listings.reserve(index_.entries().size());
    for (const auto& [key, entry] : index_.entries()) {
      ArtifactListing& listing = listings.emplace_back();
      listing.key = key;
      listing.entry = entry.summary.entry;
      listing.arch = entry.summary.arch;
      listing.description = entry.summary.description;
      listing.bytes = entry.bytes;
      listing.compile_ms = entry.summary.compile_ms;
      listing.pinned = entry.meta.pinned;
    }
  }
  std::sort(listings.begin(), listings.end(),
            [](const ArtifactListing& a, const ArtifactListing& b) {
              return a.key < b.key;
            });
  return listings;
}

StoreStats RocksStore::Stats() {
  StoreStats stats;
  stats.plan_hits = counters_.plan_hits.load(std::memory_order_relaxed);
  stats.plan_misses = counters_.plan_misses.load(std::memory_order_relaxed);
  stats.artifact_hits = counters_.artifact_hits.load(std::memory_order_relaxed);
  stats.artifact_misses =
      counters_.artifact_misses.load(std::memory_order_relaxed);
  stats.memory_hits = counters_.memory_hits.load(std::memory_order_relaxed);
  stats.corrupt_dropped =
      counters_.corrupt_dropped.load(std::memory_order_relaxed);
  stats.evictions = counters_.evictions.load(std::memory_order_relaxed);
  stats.max_bytes = options_.max_bytes;
  absl::MutexLock lock(&mu_);
  stats.artifact_entries = index_.size();
  stats.artifact_bytes = index_.total_bytes();
  stats.plan_entries = static_cast<int64_t>(plan_keys_.size());
  return stats;
}

}  // namespace hummingd::cache_internal
