#pragma once

// CompileScheduler: a bounded pool of compile threads with two priorities
// (foreground before prefetch) and single-flight per artifact key: N
// identical concurrent requests run one compile and all N share its result or
// its error. Failed compiles are remembered for a short while (negative
// cache) so a broken config cannot keep the pool busy.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cache/records.h"

namespace hummingd {

enum class CompilePriority { kForeground = 0, kPrefetch = 1 };

using ArtifactPtr = std::shared_ptr<const ArtifactRecord>;
using CompileFunction = std::function<absl::StatusOr<ArtifactPtr>()>;

// The shared outcome of one in-flight compile.
class CompileTicket {
 public:
  // Waits until the compile finishes or `deadline` passes
  // (DEADLINE_EXCEEDED; the compile itself goes on and its result is kept).
  absl::StatusOr<ArtifactPtr> Wait(absl::Time deadline) const;
  bool Done() const;

  // Runs `continuation` once the compile is done: at once on this thread if
  // it already is, else on the pool thread that finishes it (so it must be
  // short and must not block).
  void OnDone(std::function<void()> continuation) const;

 private:
  friend class CompileScheduler;
  void Complete(absl::StatusOr<ArtifactPtr> result);

  mutable absl::Mutex mutex_;
  bool done_ ABSL_GUARDED_BY(mutex_) = false;
  absl::StatusOr<ArtifactPtr> result_ ABSL_GUARDED_BY(mutex_);
  mutable std::vector<std::function<void()>> continuations_
      ABSL_GUARDED_BY(mutex_);
};

struct CompileSchedulerOptions {
  int threads = 2;
  absl::Duration negative_ttl = absl::Seconds(30);
  int64_t max_queued = 4096;  // beyond this, RESOURCE_EXHAUSTED
};

struct CompileSchedulerStats {
  int64_t compiles = 0;          // compile functions run to completion
  int64_t compile_failures = 0;  // of which failed
  int64_t shared = 0;            // requests that joined an in-flight compile
  int64_t negative_hits = 0;     // requests answered from the negative cache
  int64_t displaced = 0;  // queued prefetch jobs dropped for foreground ones
  int64_t queued = 0;     // waiting now
  int64_t running = 0;    // compiling now
};

class CompileScheduler {
 public:
  explicit CompileScheduler(const CompileSchedulerOptions& options);
  // Finishes running compiles, abandons queued ones (their waiters get
  // CANCELLED), joins the threads.
  ~CompileScheduler();

  CompileScheduler(const CompileScheduler&) = delete;
  CompileScheduler& operator=(const CompileScheduler&) = delete;

  struct Submission {
    std::shared_ptr<const CompileTicket> ticket;
    bool joined_existing = false;  // single-flight: someone else's compile
  };

  // Returns the ticket of the in-flight compile for `key`, or enqueues
  // `compile` under `key`. A foreground submission of a key queued at
  // prefetch priority promotes it. A key that failed within negative_ttl
  // returns a finished ticket holding that failure. When max_queued jobs
  // wait, a foreground submission displaces the newest queued prefetch job
  // nobody waits on in the foreground (its waiters get RESOURCE_EXHAUSTED);
  // RESOURCE_EXHAUSTED when there is none, and for prefetch submissions.
  absl::StatusOr<Submission> Submit(const std::string& key,
                                    CompilePriority priority,
                                    CompileFunction compile);

  CompileSchedulerStats Stats() const;

  // False once CancelQueued (or the destructor) closed the queue to prefetch.
  bool AcceptsPrefetch() const;

  // Abandons queued (not yet running) compiles — only prefetch ones nobody
  // waits on in the foreground when `prefetch_only` — whose waiters get
  // CANCELLED, and refuses later submissions of what it cancelled
  // (UNAVAILABLE). Running compiles finish normally. Used at shutdown so
  // that no request waits on work that will never start.
  void CancelQueued(bool prefetch_only = false);

 private:
  struct Job {
    std::string key;
    CompileFunction compile;
    std::shared_ptr<CompileTicket> ticket;
    CompilePriority priority = CompilePriority::kForeground;
    // A prefetch job a foreground submission joined: it sits in both queues
    // and is foreground work now, so neither a prefetch-only cancel nor a
    // displacement may drop it.
    bool promoted = false;
    bool started = false;
  };
  struct NegativeEntry {
    absl::Status status;
    absl::Time expires;
  };

  // Submit's work under the lock; `*displaced` is set to the job abandoned to
  // make room, whose ticket Submit completes once the lock is released.
  absl::StatusOr<Submission> SubmitLocked(const std::string& key,
                                          CompilePriority priority,
                                          CompileFunction compile,
                                          std::shared_ptr<Job>* displaced)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void WorkerLoop();
  std::shared_ptr<Job> TakeNextJobLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Takes a queued job out of the books (in flight, queued count) at once,
  // so that a later submission of its key starts afresh; the caller
  // completes its ticket after releasing the lock.
  void AbandonLocked(const std::shared_ptr<Job>& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The newest queued prefetch job nobody waits on in the foreground,
  // abandoned; null when there is none.
  std::shared_ptr<Job> DisplacePrefetchLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void Finish(const std::shared_ptr<Job>& job,
              absl::StatusOr<ArtifactPtr> result);

  const CompileSchedulerOptions options_;
  mutable absl::Mutex mutex_;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  // Set by CancelQueued: new prefetch submissions, or all, are refused.
  bool refuse_prefetch_ ABSL_GUARDED_BY(mutex_) = false;
  bool refuse_all_ ABSL_GUARDED_BY(mutex_) = false;
  // Index 0: foreground, 1: prefetch. A promoted job sits in both; whichever
  // pop reaches it first runs it and the other skips it.
  std::deque<std::shared_ptr<Job>> queues_[2] ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::string, std::shared_ptr<Job>> in_flight_
      ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::string, NegativeEntry> negative_
      ABSL_GUARDED_BY(mutex_);
  CompileSchedulerStats stats_ ABSL_GUARDED_BY(mutex_);
  std::vector<std::thread> workers_;
};

}  // namespace hummingd
