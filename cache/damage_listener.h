#pragma once

// Keeps one damaged SST file from stopping every later cache write, and
// tells the store which column family holds it.
//
// With paranoid checks on, RocksDB puts the database into read-only mode when
// a compaction meets a block whose checksum fails, and only a reopen clears
// that: every Put of the process's remaining life would fail, and the next
// open would clear the directory anyway. This listener suppresses exactly
// that background error (compaction + corruption) and queues a report naming
// the compaction's column family, which the store's damage thread takes
// (Wait) and answers by clearing the cache if the family is still a live one
// (RocksStore::ClearForCompactionReports). Every other background error keeps
// RocksDB's own handling.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/listener.h"

namespace hummingd::cache_internal {

class CompactionDamageListener final : public rocksdb::EventListener {
 public:
  struct Report {
    uint32_t family_id = 0;
    std::string error;
  };

  void OnBackgroundError(rocksdb::BackgroundErrorReason reason,
                         rocksdb::Status* error) override;
  void OnCompactionCompleted(rocksdb::DB* db,
                             const rocksdb::CompactionJobInfo& info) override;

  // Blocks until at least one report is queued, then returns and clears the
  // queue; returns empty once Stop was called.
  std::vector<Report> Wait();
  void Stop();

 private:
  absl::Mutex mu_;
  std::vector<Report> reports_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace hummingd::cache_internal
