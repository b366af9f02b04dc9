#include "server/compile_scheduler.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace hummingd {

absl::StatusOr<ArtifactPtr> CompileTicket::Wait(absl::Time deadline) const {
  absl::MutexLock lock(&mutex_);
  auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return done_; };
  if (!mutex_.AwaitWithDeadline(absl::Condition(&done), deadline)) {
    return absl::DeadlineExceededError(
        "deadline passed while the kernel was compiling; the compile goes on "
        "and a retry will find it cached");
  }
  return result_;
}

bool CompileTicket::Done() const {
  absl::MutexLock lock(&mutex_);
  return done_;
}

void CompileTicket::OnDone(std::function<void()> continuation) const {
  {
    absl::MutexLock lock(&mutex_);
    if (!done_) {
      continuations_.push_back(std::move(continuation));
      return;
    }
  }
  continuation();
}

void CompileTicket::Complete(absl::StatusOr<ArtifactPtr> result) {
  std::vector<std::function<void()>> continuations;
  {
    absl::MutexLock lock(&mutex_);
    result_ = std::move(result);
    done_ = true;
    continuations.swap(continuations_);
  }
  for (auto& continuation : continuations) continuation();
}

CompileScheduler::CompileScheduler(const CompileSchedulerOptions& options)
    : options_(options) {
  const int threads = options_.threads > 0 ? options_.threads : 1;
  workers_.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
}

CompileScheduler::~CompileScheduler() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  CancelQueued();
  for (auto& worker : workers_) worker.join();
}

void CompileScheduler::AbandonLocked(const std::shared_ptr<Job>& job) {
  job->started = true;
  if (auto it = in_flight_.find(job->key);
      it != in_flight_.end() && it->second == job) {
    in_flight_.erase(it);
  }
  --stats_.queued;
}

void CompileScheduler::CancelQueued(bool prefetch_only) {
  std::vector<std::shared_ptr<Job>> abandoned;
  {
    absl::MutexLock lock(&mutex_);
    // Closes the queue to what it cancels: a Prefetch still starting its
    // items would otherwise queue more behind the cancel.
    if (prefetch_only) {
      refuse_prefetch_ = true;
    } else {
      refuse_all_ = true;
    }
    for (int priority = prefetch_only ? 1 : 0; priority < 2; ++priority) {
      auto& queue = queues_[priority];
      for (auto& job : queue) {
        // A promoted job's other copy, in the foreground queue, stays.
        if (job->started || (prefetch_only && job->promoted)) continue;
        AbandonLocked(job);
        abandoned.push_back(job);
      }
      queue.clear();
    }
  }
  for (auto& job : abandoned) {
    job->ticket->Complete(absl::CancelledError("daemon is shutting down"));
  }
}

std::shared_ptr<CompileScheduler::Job>
CompileScheduler::DisplacePrefetchLocked() {
  auto& queue = queues_[static_cast<int>(CompilePriority::kPrefetch)];
  // The newest: the oldest has waited longest and is nearest to running.
  for (auto it = queue.rbegin(); it != queue.rend(); ++it) {
    std::shared_ptr<Job> job = *it;
    if (job->started || job->promoted) continue;
    queue.erase(std::next(it).base());
    AbandonLocked(job);
    ++stats_.displaced;
    return job;
  }
  return nullptr;
}

absl::StatusOr<CompileScheduler::Submission> CompileScheduler::Submit(
    const std::string& key, CompilePriority priority, CompileFunction compile) {
  std::shared_ptr<Job> displaced;
  absl::StatusOr<Submission> submission;
  {
    absl::MutexLock lock(&mutex_);
    submission = SubmitLocked(key, priority, std::move(compile), &displaced);
  }
  if (displaced != nullptr) {
    log::Info(absl::StrCat("event=prefetch_displaced key=", displaced->key));
    displaced->ticket->Complete(absl::ResourceExhaustedError(absl::StrCat(
        "compile queue is full (", options_.max_queued,
        " waiting compiles): prefetch compile displaced by foreground work")));
  }
  return submission;
}

absl::StatusOr<CompileScheduler::Submission> CompileScheduler::SubmitLocked(
    const std::string& key, CompilePriority priority, CompileFunction compile,
    std::shared_ptr<Job>* displaced) {
  if (stopping_ || refuse_all_ ||
      (refuse_prefetch_ && priority == CompilePriority::kPrefetch)) {
    return absl::UnavailableError("daemon is shutting down");
  }

  if (auto it = in_flight_.find(key); it != in_flight_.end()) {
    ++stats_.shared;
    std::shared_ptr<Job>& job = it->second;
    if (priority == CompilePriority::kForeground && !job->started &&
        job->priority == CompilePriority::kPrefetch && !job->promoted) {
      // Promotion: the copy in the prefetch queue is skipped once run.
      job->promoted = true;
      queues_[0].push_back(job);
    }
    return Submission{job->ticket, /*joined_existing=*/true};
  }

  if (auto it = negative_.find(key); it != negative_.end()) {
    if (absl::Now() < it->second.expires) {
      ++stats_.negative_hits;
      auto ticket = std::make_shared<CompileTicket>();
      absl::MutexLock ticket_lock(&ticket->mutex_);
      ticket->done_ = true;
      ticket->result_ = it->second.status;
      return Submission{ticket, /*joined_existing=*/false};
    }
    negative_.erase(it);
  }

  if (stats_.queued >= options_.max_queued) {
    // Queued prefetch work must not lock foreground requests out.
    if (priority == CompilePriority::kForeground) {
      *displaced = DisplacePrefetchLocked();
    }
    if (*displaced == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("compile queue is full (", options_.max_queued,
                       " waiting compiles)"));
    }
  }

  auto job = std::make_shared<Job>();
  job->key = key;
  job->compile = std::move(compile);
  job->ticket = std::make_shared<CompileTicket>();
  job->priority = priority;
  in_flight_.emplace(key, job);
  queues_[static_cast<int>(priority)].push_back(job);
  ++stats_.queued;
  return Submission{job->ticket, /*joined_existing=*/false};
}

std::shared_ptr<CompileScheduler::Job> CompileScheduler::TakeNextJobLocked() {
  for (auto& queue : queues_) {
    while (!queue.empty()) {
      std::shared_ptr<Job> job = std::move(queue.front());
      queue.pop_front();
      if (!job->started) {
        job->started = true;
        return job;
      }
    }
  }
  return nullptr;
}

void CompileScheduler::WorkerLoop() {
  while (true) {
    std::shared_ptr<Job> job;
    {
      absl::MutexLock lock(&mutex_);
      auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
        return stopping_ || stats_.queued > 0;
      };
      mutex_.Await(absl::Condition(&has_work));
      if (stopping_) return;
      job = TakeNextJobLocked();
      if (job == nullptr) continue;
      --stats_.queued;
      ++stats_.running;
    }
    absl::StatusOr<ArtifactPtr> result = job->compile();
    if (!result.ok()) {
      log::Warn(absl::StrCat("event=compile_failed key=", job->key, " error=\"",
                             result.status().message(), "\""));
    }
    Finish(job, std::move(result));
  }
}

void CompileScheduler::Finish(const std::shared_ptr<Job>& job,
                              absl::StatusOr<ArtifactPtr> result) {
  {
    absl::MutexLock lock(&mutex_);
    in_flight_.erase(job->key);
    --stats_.running;
    ++stats_.compiles;
    if (!result.ok()) {
      ++stats_.compile_failures;
      negative_[job->key] =
          NegativeEntry{result.status(), absl::Now() + options_.negative_ttl};
    }
  }
  job->ticket->Complete(std::move(result));
}

bool CompileScheduler::AcceptsPrefetch() const {
  absl::MutexLock lock(&mutex_);
  return !stopping_ && !refuse_all_ && !refuse_prefetch_;
}

CompileSchedulerStats CompileScheduler::Stats() const {
  absl::MutexLock lock(&mutex_);
  return stats_;
}

}  // namespace hummingd
