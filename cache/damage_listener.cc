#include "cache/damage_listener.h"

#include <utility>

namespace hummingd::cache_internal {

void CompactionDamageListener::OnBackgroundError(
    rocksdb::BackgroundErrorReason reason, rocksdb::Status* error) {
  if (reason != rocksdb::BackgroundErrorReason::kCompaction ||
      !error->IsCorruption()) {
    return;
  }
  // The compaction's inputs stay as they were; suppressing the error only
  // keeps the database writable until the store drops the damaged family
  // (OnCompactionCompleted reports which one).
  *error = rocksdb::Status::OK();
}

void CompactionDamageListener::OnCompactionCompleted(
    rocksdb::DB* /*db*/, const rocksdb::CompactionJobInfo& info) {
  if (!info.status.IsCorruption()) return;
  absl::MutexLock lock(&mu_);
  if (stopped_) return;
  reports_.push_back(Report{info.cf_id, info.status.ToString()});
}

std::vector<CompactionDamageListener::Report> CompactionDamageListener::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](CompactionDamageListener* self) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return self->stopped_ || !self->reports_.empty();
      },
      this));
  if (stopped_) return {};
  return std::exchange(reports_, {});
}

void CompactionDamageListener::Stop() {
  absl::MutexLock lock(&mu_);
  stopped_ = true;
}

}  // namespace hummingd::cache_internal
