// RocksStore: opening a directory, checking its schema version and rebuilding
// the in-memory index from disk. Everything here runs before the store is
// shared, so it may replace column family handles.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "cache/absl_view.h"
#include "cache/keys.h"
#include "cache/record_codec.h"
#include "cache/rocks_options.h"
#include "cache/rocks_status.h"
#include "cache/rocks_store.h"
#include "cache/value_codec.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "rocksdb/write_batch.h"

namespace hummingd {
namespace cache_internal {
namespace {

constexpr std::string_view kArtifactMetaPrefix = "artifact/";

absl::Status ValidateOptions(const RocksStoreOptions& options) {
  if (options.directory.empty()) {
    return absl::InvalidArgumentError("cache.directory: must not be empty");
  }
  if (options.max_bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cache.max_bytes: must be > 0 (got ", options.max_bytes, ")"));
  }
  if (options.memory_tier_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache.memory_tier_bytes: must be >= 0 (got ",
                     options.memory_tier_bytes, ")"));
  }
  return absl::OkStatus();
}

// Every family the directory already has must be opened, plus ours.
std::vector<std::string> FamiliesToOpen(const rocksdb::DBOptions& db_options,
                                        const std::string& directory) {
  std::vector<std::string> names;
  // Fails on a fresh directory (no CURRENT file yet): then only ours exist.
  if (!rocksdb::DB::ListColumnFamilies(db_options, directory, &names).ok()) {
    names.clear();
  }
  for (const char* name : {rocksdb::kDefaultColumnFamilyName.c_str(),
                           kPlansFamily, kArtifactsFamily, kMetaFamily}) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      names.emplace_back(name);
    }
  }
  return names;
}

}  // namespace

absl::StatusOr<std::unique_ptr<KernelStore>> RocksStore::Open(
    const RocksStoreOptions& options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  std::error_code error;
  std::filesystem::create_directories(options.directory, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cache.directory: cannot create ", options.directory, ": ",
                     error.message()));
  }

  ASSIGN_OR_RETURN(DirectoryLock directory_lock,
                   DirectoryLock::Acquire(options.directory));
  RocksTuning tuning = MakeRocksTuning();
  auto damage_listener = std::make_shared<CompactionDamageListener>();
  tuning.db.listeners.push_back(damage_listener);
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : FamiliesToOpen(tuning.db, options.directory)) {
    descriptors.emplace_back(name, tuning.ForFamily(name));
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw_db = nullptr;
  rocksdb::Status opened = rocksdb::DB::Open(tuning.db, options.directory,
                                             descriptors, &handles, &raw_db);
  bool cleared = false;
  if (opened.IsCorruption()) {
    // Files the manifest names are damaged (e.g. an SST cut short by a
    // partial copy). This is a cache: start empty rather than refuse to
    // start, as for damage found while the index is rebuilt. The directory
    // lock (above) keeps any other store out meanwhile; DestroyDB removes
    // only RocksDB's own files (hummingd.lock stays, and so the folder).
    log::Error(absl::StrCat("cache: dir=", options.directory,
                            " cannot be opened (", opened.ToString(),
                            "); clearing it"));
    rocksdb::Options destroy_options(tuning.db, rocksdb::ColumnFamilyOptions());
    RETURN_IF_ERROR(FromRocksStatus(
        rocksdb::DestroyDB(options.directory, destroy_options, descriptors),
        "clear damaged directory", options.directory));
    descriptors.clear();
    for (const std::string& name :
         FamiliesToOpen(tuning.db, options.directory)) {
      descriptors.emplace_back(name, tuning.ForFamily(name));
    }
    opened = rocksdb::DB::Open(tuning.db, options.directory, descriptors,
                               &handles, &raw_db);
    cleared = true;
  }
  RETURN_IF_ERROR(FromRocksStatus(opened, "open", options.directory));

  std::unique_ptr<RocksStore> store(new RocksStore(
      options, std::move(directory_lock), std::unique_ptr<rocksdb::DB>(raw_db),
      std::move(handles), std::move(damage_listener)));
  if (cleared) {
    store->counters_.corrupt_dropped.fetch_add(1, std::memory_order_relaxed);
  }
  RETURN_IF_ERROR(store->Recover());
  RocksStore* watched = store.get();
  store->damage_watcher_ =
      std::thread([watched] { watched->WatchForDamage(); });
  return std::unique_ptr<KernelStore>(std::move(store));
}

rocksdb::ColumnFamilyHandle* RocksStore::Handle(const std::string& name) const {
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    if (handle->GetName() == name) return handle;
  }
  return nullptr;
}

absl::Status RocksStore::Recover() {
  absl::MutexLock write_lock(&write_mu_);
  plans_ = Handle(kPlansFamily);
  artifacts_ = Handle(kArtifactsFamily);
  meta_ = Handle(kMetaFamily);
  if (plans() == nullptr || artifacts() == nullptr || meta() == nullptr) {
    return absl::InternalError("cache open: a column family is missing");
  }
  absl::Status loaded = CheckSchemaVersion();
  if (loaded.ok()) loaded = LoadIndex();
  if (absl::IsDataLoss(loaded)) {
    // RocksDB itself found damaged files (its block checksums failed). This
    // is a cache: start empty rather than refuse to start.
    RETURN_IF_ERROR(ClearCache(loaded.message()));
  } else {
    RETURN_IF_ERROR(loaded);
  }
  RETURN_IF_ERROR(EnforceByteBound());
  const StoreStats stats = Stats();
  log::Info(absl::StrCat("cache: opened dir=", options_.directory,
                         " artifacts=", stats.artifact_entries,
                         " artifact_bytes=", stats.artifact_bytes, " plans=",
                         stats.plan_entries, " max_bytes=", options_.max_bytes,
                         " corrupt_dropped=", stats.corrupt_dropped));
  return absl::OkStatus();
}

absl::Status RocksStore::CheckSchemaVersion() {
  std::string marker;
  rocksdb::Status status =
      db_->Get(rocksdb::ReadOptions(), meta(), kSchemaMarkerKey, &marker);
  std::string found;  // why the directory is cleared; empty = keep it
  if (status.ok()) {
    absl::StatusOr<int> version = DecodeSchemaMarkerValue(marker);
    if (!version.ok()) {
      found = absl::StrCat("an unreadable schema marker (",
                           version.status().message(), ")");
    } else if (*version != kCacheSchemaVersion) {
      found = absl::StrCat("schema version ", *version);
    } else {
      return absl::OkStatus();
    }
  } else if (status.IsNotFound()) {
    // No marker: a fresh directory, unless something wrote entries without
    // one (a build older than the marker).
    for (rocksdb::ColumnFamilyHandle* handle : {plans(), artifacts(), meta()}) {
      std::unique_ptr<rocksdb::Iterator> it(
          db_->NewIterator(rocksdb::ReadOptions(), handle));
      it->SeekToFirst();
      RETURN_IF_ERROR(Rocks(it->status(), "read schema version"));
      if (it->Valid()) found = "entries without a schema marker";
    }
  } else {
    return Rocks(status, "read schema version");
  }

  if (!found.empty()) {
    log::Warn(absl::StrCat("cache: dir=", options_.directory, " holds ", found,
                           ", this build uses schema version ",
                           kCacheSchemaVersion, "; clearing old entries"));
    RETURN_IF_ERROR(RecreateFamilies());
  }
  return WriteSchemaMarker();
}

absl::Status RocksStore::WriteSchemaMarker() {
  rocksdb::WriteBatch batch;
  batch.Put(meta(), kSchemaMarkerKey,
            EncodeSchemaMarkerValue(kCacheSchemaVersion));
  return Write(batch, /*sync=*/true, "write schema version");
}

absl::Status RocksStore::RecreateFamilies() {
  const RocksTuning tuning = MakeRocksTuning();
  std::vector<rocksdb::ColumnFamilyHandle*> replaced;
  absl::Status status;
  {
    // Waits for every reader using the old handles; later ones see the new.
    absl::WriterMutexLock families(&families_mu_);
    for (std::atomic<rocksdb::ColumnFamilyHandle*>* slot :
         {&plans_, &artifacts_, &meta_}) {
      rocksdb::ColumnFamilyHandle* old_handle = slot->load();
      const std::string name = old_handle->GetName();
      status = Rocks(db_->DropColumnFamily(old_handle), "clear " + name);
      if (!status.ok()) break;
      rocksdb::ColumnFamilyHandle* new_handle = nullptr;
      status = Rocks(
          db_->CreateColumnFamily(tuning.ForFamily(name), name, &new_handle),
          "recreate " + name);
      if (!status.ok()) break;  // the slot keeps its dropped handle
      std::replace(handles_.begin(), handles_.end(), old_handle, new_handle);
      slot->store(new_handle, std::memory_order_release);
      replaced.push_back(old_handle);
    }
    ++generation_;
  }
  // No reader holds them now; destroying a dropped family's last handle
  // deletes its files.
  for (rocksdb::ColumnFamilyHandle* handle : replaced) {
    rocksdb::Status destroyed = db_->DestroyColumnFamilyHandle(handle);
    if (!destroyed.ok()) {
      log::Warn(absl::StrCat(
          "cache: releasing a cleared family failed dir=", options_.directory,
          " error=", destroyed.ToString()));
    }
  }
  return status;
}

absl::Status RocksStore::ClearCache(absl::string_view why) {
  RETURN_IF_ERROR(CheckUsable());
  log::Error(absl::StrCat("cache: dir=", options_.directory, " is damaged (",
                          why, "); clearing it"));
  {
    absl::MutexLock lock(&mu_);
    index_.Clear();
    artifact_memory_.Clear();
    plan_keys_.clear();
    plan_memory_.Clear();
  }
  absl::Status recreated = RecreateFamilies();
  if (!recreated.ok()) {
    unusable_ = true;
    return recreated;
  }
  counters_.corrupt_dropped.fetch_add(1, std::memory_order_relaxed);
  return WriteSchemaMarker();
}

absl::StatusOr<RocksStore::DirectoryLock> RocksStore::DirectoryLock::Acquire(
    const std::string& directory) {
  const std::string path = directory + "/hummingd.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cache.directory: cannot open ", path, ": ", std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cache dir ", directory,
          " is locked by another process (is another hummingd running on "
          "it?)"));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "cache.directory: cannot lock ", path, ": ", std::strerror(error)));
  }
  return DirectoryLock(fd);
}

RocksStore::DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

RocksStore::DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

absl::Status RocksStore::LoadIndex() {
  rocksdb::WriteBatch cleanup;
  int64_t dropped = 0;
  auto drop = [&](rocksdb::ColumnFamilyHandle* handle, const char* family,
                  const rocksdb::Slice& key, const absl::Status& reason) {
    cleanup.Delete(handle, key);
    ++dropped;
    log::Warn(absl::StrCat("cache: corrupt value dropped family=", family,
                           " key=", key.ToString(), " reason=\"",
                           reason.message(), "\""));
  };

  // Bookkeeping first, so artifacts can be indexed with their ticks.
  absl::flat_hash_map<std::string, ArtifactMeta> metas;
  {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), meta()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string_view key = it->key().ToStringView();
      if (!key.starts_with(kArtifactMetaPrefix)) continue;
      absl::StatusOr<ArtifactMeta> meta =
          DecodeArtifactMetaValue(it->value().ToStringView());
      if (!meta.ok()) {
        drop(this->meta(), "meta", it->key(), meta.status());
        continue;
      }
      metas.emplace(key.substr(kArtifactMetaPrefix.size()), *meta);
    }
    RETURN_IF_ERROR(Rocks(it->status(), "scan meta"));
  }

  {
    rocksdb::ReadOptions read;
    read.fill_cache = false;
    read.readahead_size = size_t{4} << 20;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, artifacts()));
    absl::MutexLock lock(&mu_);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string_view key = it->key().ToStringView();
      absl::StatusOr<ArtifactSummary> summary =
          DecodeArtifactSummary(it->value().ToStringView());
      if (!summary.ok()) {
        drop(artifacts(), "artifacts", it->key(), summary.status());
        cleanup.Delete(meta(), ArtifactMetaKey(key));
        continue;
      }
      ArtifactMeta meta;  // tick 0: an artifact without bookkeeping goes first
      if (auto found = metas.find(ToAbsl(key)); found != metas.end()) {
        meta = found->second;
        metas.erase(found);
      }
      index_.Upsert(key, static_cast<int64_t>(it->value().size()), meta,
                    *std::move(summary));
    }
    RETURN_IF_ERROR(Rocks(it->status(), "scan artifacts"));
  }
  for (const auto& [key, meta] : metas) {
    cleanup.Delete(this->meta(), ArtifactMetaKey(key));  // artifact is gone
  }

  {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), plans()));
    absl::MutexLock lock(&mu_);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      absl::StatusOr<PlanRecord> plan =
          DecodePlanValue(it->value().ToStringView());
      if (!plan.ok()) {
        drop(plans(), "plans", it->key(), plan.status());
        continue;
      }
      plan_keys_.emplace(it->key().ToStringView());
    }
    RETURN_IF_ERROR(Rocks(it->status(), "scan plans"));
  }

  counters_.corrupt_dropped.fetch_add(dropped, std::memory_order_relaxed);
  if (cleanup.Count() == 0) return absl::OkStatus();
  return Write(cleanup, /*sync=*/true, "drop corrupt entries");
}

absl::Status RocksStore::EnforceByteBound() {
  VictimPlan victims;
  int64_t total = 0;
  {
    absl::MutexLock lock(&mu_);
    total = index_.total_bytes();
    victims = index_.PickVictims(total - options_.max_bytes, "");
  }
  if (victims.keys.empty()) return absl::OkStatus();
  rocksdb::WriteBatch batch;
  for (const std::string& key : victims.keys) DeleteArtifactInBatch(batch, key);
  RETURN_IF_ERROR(Write(batch, /*sync=*/true, "evict to max_bytes"));
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& key : victims.keys) index_.Remove(key);
    total = index_.total_bytes();
  }
  counters_.evictions.fetch_add(static_cast<int64_t>(victims.keys.size()),
                                std::memory_order_relaxed);
  log::Info(absl::StrCat("cache: evicted count=", victims.keys.size(),
                         " at open to honour max_bytes=", options_.max_bytes));
  if (total > options_.max_bytes) {
    log::Warn(absl::StrCat("cache: pinned artifacts hold ", total,
                           " bytes, above max_bytes=", options_.max_bytes));
  }
  return absl::OkStatus();
}

}  // namespace cache_internal

absl::StatusOr<std::unique_ptr<KernelStore>> OpenRocksStore(
    const RocksStoreOptions& options) {
  return cache_internal::RocksStore::Open(options);
}

}  // namespace hummingd
