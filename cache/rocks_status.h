#pragma once

// The one place a rocksdb::Status becomes an absl::Status (STYLE.md, "Errors").

#include <string_view>

#include "absl/status/status.h"
#include "rocksdb/status.h"

namespace hummingd::cache_internal {

// `operation` says what failed ("open", "put artifact"); `directory` is the
// cache directory, named in every message. A held directory lock becomes
// FAILED_PRECONDITION "cache dir <dir> is locked by another process (…)".
absl::Status FromRocksStatus(const rocksdb::Status& status,
                             std::string_view operation,
                             std::string_view directory);

}  // namespace hummingd::cache_internal
