#include "cache/damage_listener.h"

#include <utility>

namespace hummingd::cache_internal {

void CompactionDamageListener::OnBackgroundError(
    rocksdb::BackgroundErrorReason reason, rocksdb::Status* error) {
  if (reason != rocksdb::BackgroundErrorReason::kCompaction ||
      !error->IsCorruption()) {
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (first_error_.empty()) first_error_ = error->ToString();
  }
  found_.store(true, std::memory_order_release);
  // The compaction's inputs stay as they were; suppressing the error only
  // keeps the database writable until the store drops the damaged files.
  *error = rocksdb::Status::OK();
}

std::string CompactionDamageListener::Take() {
  absl::MutexLock lock(&mu_);
  found_.store(false, std::memory_order_release);
  return std::exchange(first_error_, std::string());
}

}  // namespace hummingd::cache_internal
