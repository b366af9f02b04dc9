#pragma once

// RocksDB tuning for the kernel cache: few, mid-sized values (cubins of
// ~50 KB – 1 MB), read-mostly, one writer. Kept apart from the store so the
// numbers and their reasons live in one place.

#include <string>

#include "rocksdb/options.h"

namespace hummingd::cache_internal {

inline constexpr char kPlansFamily[] = "plans";
inline constexpr char kArtifactsFamily[] = "artifacts";
inline constexpr char kMetaFamily[] = "meta";

struct RocksTuning {
  rocksdb::DBOptions db;
  rocksdb::ColumnFamilyOptions plans;
  rocksdb::ColumnFamilyOptions artifacts;
  rocksdb::ColumnFamilyOptions meta;
  // Options for a column family this version does not know (opened only
  // because RocksDB requires every existing family to be opened).
  rocksdb::ColumnFamilyOptions unknown;

  const rocksdb::ColumnFamilyOptions& ForFamily(const std::string& name) const;
};

RocksTuning MakeRocksTuning();

}  // namespace hummingd::cache_internal
