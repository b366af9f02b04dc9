#include "cache/rocks_status.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace hummingd::cache_internal {
namespace {

TEST(RocksStatusTest, MapsEachKindOfError) {
  const char kDir[] = "/var/cache/hummingd";
  EXPECT_TRUE(FromRocksStatus(rocksdb::Status::OK(), "get", kDir).ok());
  EXPECT_EQ(
      FromRocksStatus(rocksdb::Status::Corruption("bad block"), "get", kDir)
          .code(),
      absl::StatusCode::kDataLoss);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::NoSpace("disk full"), "put", kDir)
                .code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(
      FromRocksStatus(rocksdb::Status::IOError("read failed"), "get", kDir)
          .code(),
      absl::StatusCode::kUnavailable);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::NotFound("x"), "get", kDir).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::InvalidArgument("x"), "open", kDir)
                .code(),
            absl::StatusCode::kInternal);
  const absl::Status io = FromRocksStatus(
      rocksdb::Status::IOError("read failed"), "get artifact", kDir);
  EXPECT_NE(io.message().find("get artifact"), std::string_view::npos);
  EXPECT_NE(io.message().find(kDir), std::string_view::npos);
}

TEST(RocksStatusTest, HeldLockIsFailedPreconditionNamingTheDirectory) {
  const absl::Status status = FromRocksStatus(
      rocksdb::Status::IOError("While lock file: /var/cache/hummingd/LOCK",
                               "Resource temporarily unavailable"),
      "open", "/var/cache/hummingd");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "cache dir /var/cache/hummingd is locked by another process (is "
            "another hummingd running on it?)");
}

}  // namespace
}  // namespace hummingd::cache_internal
