#include "cache/rocks_options.h"

#include <algorithm>
#include <memory>

#include "rocksdb/cache.h"
#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"

namespace hummingd::cache_internal {
namespace {

// Decoded artifacts are cached by the store's own memory tier, so RocksDB's
// block cache only needs to hold index/filter blocks and small plan/meta
// blocks.
constexpr size_t kBlockCacheBytes = size_t{8} << 20;

rocksdb::ColumnFamilyOptions FamilyOptions(
    const std::shared_ptr<rocksdb::Cache>& block_cache,
    size_t write_buffer_bytes, size_t block_bytes) {
  rocksdb::ColumnFamilyOptions options;
  options.write_buffer_size = write_buffer_bytes;
  options.max_write_buffer_number = 2;
  options.level_compaction_dynamic_level_bytes = true;
  // Values are stored inline: blob files pay off for much larger values or
  // much higher write rates than a kernel cache sees.
  options.enable_blob_files = false;
  // LZ4 when available: cubins compress well and decompress fast on a
  // memory-tier miss.
  const auto supported = rocksdb::GetSupportedCompressions();
  options.compression = std::find(supported.begin(), supported.end(),
                                  rocksdb::kLZ4Compression) != supported.end()
                            ? rocksdb::kLZ4Compression
                            : rocksdb::kNoCompression;

  rocksdb::BlockBasedTableOptions table;
  table.block_cache = block_cache;
  table.block_size = block_bytes;
  // Misses are common (every new kernel starts as one): a bloom filter keeps
  // them off the data blocks.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

}  // namespace

const rocksdb::ColumnFamilyOptions& RocksTuning::ForFamily(
    const std::string& name) const {
  if (name == kPlansFamily) return plans;
  if (name == kArtifactsFamily) return artifacts;
  if (name == kMetaFamily) return meta;
  return unknown;
}

RocksTuning MakeRocksTuning() {
  RocksTuning tuning;
  rocksdb::DBOptions& db = tuning.db;
  db.create_if_missing = true;
  db.create_missing_column_families = true;
  db.paranoid_checks = true;
  // Crash recovery stops at the first bad WAL record: a torn last write is
  // lost (it was never acknowledged), nothing after it is replayed.
  db.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  db.max_total_wal_size = uint64_t{64} << 20;
  db.max_background_jobs = 2;
  db.max_open_files = 256;
  db.keep_log_file_num = 4;
  db.max_log_file_size = size_t{4} << 20;

  auto block_cache = rocksdb::NewLRUCache(kBlockCacheBytes);
  tuning.artifacts =
      FamilyOptions(block_cache, size_t{32} << 20, size_t{16} << 10);
  tuning.plans = FamilyOptions(block_cache, size_t{4} << 20, size_t{4} << 10);
  tuning.meta = FamilyOptions(block_cache, size_t{4} << 20, size_t{4} << 10);
  tuning.unknown = tuning.meta;
  return tuning;
}

}  // namespace hummingd::cache_internal
