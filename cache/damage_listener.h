#pragma once

// Keeps one damaged SST file from stopping every later cache write.
//
// With paranoid checks on, RocksDB puts the database into read-only mode when
// a compaction meets a block whose checksum fails, and only a reopen clears
// that: every Put of the process's remaining life would fail, and the next
// open would clear the directory anyway. This listener suppresses exactly
// that error (compaction + corruption) and records it, so that the store
// clears the damaged cache itself before its next write (RocksStore::
// ClearDamagedCache), as it does when the damage is found at open. Every
// other background error keeps RocksDB's own handling.

#include <atomic>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/listener.h"

namespace hummingd::cache_internal {

class CompactionDamageListener final : public rocksdb::EventListener {
 public:
  void OnBackgroundError(rocksdb::BackgroundErrorReason reason,
                         rocksdb::Status* error) override;

  // Whether a compaction found damage since the last Take (cheap: one atomic
  // load when nothing was found).
  bool found() const { return found_.load(std::memory_order_acquire); }
  // The first damage's description since the last call, and resets; empty
  // when none was found.
  std::string Take();

 private:
  std::atomic<bool> found_{false};
  absl::Mutex mu_;
  std::string first_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hummingd::cache_internal
