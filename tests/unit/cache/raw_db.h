#pragma once

// Direct RocksDB access to a closed store's directory, so tests can damage or
// inspect stored values the way a bad disk or an old build would.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace hummingd::cache_test {

class RawDb {
 public:
  explicit RawDb(const std::string& directory) {
    std::vector<std::string> names;
    rocksdb::Status status = rocksdb::DB::ListColumnFamilies(
        rocksdb::DBOptions(), directory, &names);
    EXPECT_TRUE(status.ok()) << status.ToString();
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const std::string& name : names) {
      descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
    }
    rocksdb::DB* db = nullptr;
    status = rocksdb::DB::Open(rocksdb::DBOptions(), directory, descriptors,
                               &handles_, &db);
    EXPECT_TRUE(status.ok()) << status.ToString();
    db_.reset(db);
  }
  ~RawDb() {
    for (rocksdb::ColumnFamilyHandle* handle : handles_) {
      db_->DestroyColumnFamilyHandle(handle);
    }
    db_->Close();
  }

  rocksdb::ColumnFamilyHandle* Family(const std::string& name) {
    for (rocksdb::ColumnFamilyHandle* handle : handles_) {
      if (handle->GetName() == name) return handle;
    }
    ADD_FAILURE() << "no column family " << name;
    return nullptr;
  }

  std::optional<std::string> Get(const std::string& family,
                                 const std::string& key) {
    std::string value;
    rocksdb::Status status =
        db_->Get(rocksdb::ReadOptions(), Family(family), key, &value);
    if (status.IsNotFound()) return std::nullopt;
    EXPECT_TRUE(status.ok()) << status.ToString();
    return value;
  }

  // Moves everything from the memtables into SST files.
  void FlushAll() {
    for (rocksdb::ColumnFamilyHandle* handle : handles_) {
      rocksdb::Status status = db_->Flush(rocksdb::FlushOptions(), handle);
      ASSERT_TRUE(status.ok()) << status.ToString();
    }
  }

  void Put(const std::string& family, const std::string& key,
           const std::string& value) {
    rocksdb::WriteOptions write;
    write.sync = true;
    rocksdb::Status status = db_->Put(write, Family(family), key, value);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

}  // namespace hummingd::cache_test
