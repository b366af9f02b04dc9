#include "server/compile_scheduler.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace hummingd {
namespace {

ArtifactPtr MakeArtifact(const std::string& tag) {
  auto record = std::make_shared<ArtifactRecord>();
  record->cubin = "cubin-" + tag;
  record->entry = "entry";
  return record;
}

TEST(CompileSchedulerTest, IdenticalConcurrentSubmissionsRunOnce) {
  CompileScheduler scheduler({.threads = 2});
  std::atomic<int> runs{0};
  absl::Notification release;
  std::vector<std::shared_ptr<const CompileTicket>> tickets;
  int joined = 0;
  for (int i = 0; i < 32; ++i) {
    auto submission = scheduler.Submit("key", CompilePriority::kForeground,
                                       [&]() -> absl::StatusOr<ArtifactPtr> {
                                         ++runs;
                                         release.WaitForNotification();
                                         return MakeArtifact("a");
                                       });
    ASSERT_TRUE(submission.ok());
    joined += submission->joined_existing ? 1 : 0;
    tickets.push_back(submission->ticket);
  }
  release.Notify();
  for (auto& ticket : tickets) {
    auto result = ticket->Wait(absl::InfiniteFuture());
    ASSERT_TRUE(result.ok());
    EXPECT_EQ((*result)->cubin, "cubin-a");
  }
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(joined, 31);
  EXPECT_EQ(scheduler.Stats().shared, 31);
  EXPECT_EQ(scheduler.Stats().compiles, 1);
}

TEST(CompileSchedulerTest, ErrorsAreSharedAndNegativelyCached) {
  CompileScheduler scheduler({.threads = 1, .negative_ttl = absl::Hours(1)});
  std::atomic<int> runs{0};
  auto failing = [&]() -> absl::StatusOr<ArtifactPtr> {
    ++runs;
    return absl::InternalError("nvrtc: error: boom");
  };
  auto first = scheduler.Submit("bad", CompilePriority::kForeground, failing);
  ASSERT_TRUE(first.ok());
  auto result = first->ticket->Wait(absl::InfiniteFuture());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(result.status().message().find("boom"), std::string::npos);

  auto second = scheduler.Submit("bad", CompilePriority::kForeground, failing);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->ticket->Done());
  EXPECT_EQ(second->ticket->Wait(absl::InfiniteFuture()).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(scheduler.Stats().negative_hits, 1);
  EXPECT_EQ(scheduler.Stats().compile_failures, 1);
}

TEST(CompileSchedulerTest, NegativeEntriesExpire) {
  CompileScheduler scheduler(
      {.threads = 1, .negative_ttl = absl::ZeroDuration()});
  std::atomic<int> runs{0};
  auto failing = [&]() -> absl::StatusOr<ArtifactPtr> {
    ++runs;
    return absl::InternalError("boom");
  };
  for (int i = 0; i < 2; ++i) {
    auto submission =
        scheduler.Submit("bad", CompilePriority::kForeground, failing);
    ASSERT_TRUE(submission.ok());
    submission->ticket->Wait(absl::InfiniteFuture()).IgnoreError();
  }
  EXPECT_EQ(runs.load(), 2);
}

TEST(CompileSchedulerTest, ForegroundRunsBeforeQueuedPrefetch) {
  CompileScheduler scheduler({.threads = 1});
  absl::Notification release;
  std::vector<std::string> order;
  absl::Mutex order_mutex;
  auto record = [&](const std::string& name) {
    return [&, name]() -> absl::StatusOr<ArtifactPtr> {
      absl::MutexLock lock(&order_mutex);
      order.push_back(name);
      return MakeArtifact(name);
    };
  };
  // Occupy the only thread so everything else queues.
  auto blocker = scheduler.Submit("blocker", CompilePriority::kForeground,
                                  [&]() -> absl::StatusOr<ArtifactPtr> {
                                    release.WaitForNotification();
                                    return MakeArtifact("blocker");
                                  });
  ASSERT_TRUE(blocker.ok());
  while (scheduler.Stats().running == 0) std::this_thread::yield();
  auto p1 = scheduler.Submit("p1", CompilePriority::kPrefetch, record("p1"));
  auto p2 = scheduler.Submit("p2", CompilePriority::kPrefetch, record("p2"));
  auto f1 = scheduler.Submit("f1", CompilePriority::kForeground, record("f1"));
  // A foreground request for a queued prefetch key promotes it.
  auto p2_again =
      scheduler.Submit("p2", CompilePriority::kForeground, record("p2-dup"));
  ASSERT_TRUE(p1.ok() && p2.ok() && f1.ok() && p2_again.ok());
  EXPECT_TRUE(p2_again->joined_existing);
  release.Notify();
  for (auto* s : {&p1, &p2, &f1, &p2_again}) {
    ASSERT_TRUE((*s)->ticket->Wait(absl::InfiniteFuture()).ok());
  }
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0], "f1");
  EXPECT_EQ(order[1], "p2");
  EXPECT_EQ(order[2], "p1");
}

TEST(CompileSchedulerTest, WaitHonoursTheDeadlineAndTheCompileGoesOn) {
  CompileScheduler scheduler({.threads = 1});
  absl::Notification release;
  auto submission = scheduler.Submit("slow", CompilePriority::kForeground,
                                     [&]() -> absl::StatusOr<ArtifactPtr> {
                                       release.WaitForNotification();
                                       return MakeArtifact("slow");
                                     });
  ASSERT_TRUE(submission.ok());
  auto waited = submission->ticket->Wait(absl::Now() + absl::Milliseconds(50));
  EXPECT_EQ(waited.status().code(), absl::StatusCode::kDeadlineExceeded);
  release.Notify();
  auto finished = submission->ticket->Wait(absl::InfiniteFuture());
  ASSERT_TRUE(finished.ok());
  EXPECT_EQ((*finished)->cubin, "cubin-slow");
}

TEST(CompileSchedulerTest, ShutdownCancelsQueuedWork) {
  absl::Notification release;
  std::shared_ptr<const CompileTicket> queued;
  {
    CompileScheduler scheduler({.threads = 1});
    auto running = scheduler.Submit("running", CompilePriority::kForeground,
                                    [&]() -> absl::StatusOr<ArtifactPtr> {
                                      release.WaitForNotification();
                                      return MakeArtifact("r");
                                    });
    ASSERT_TRUE(running.ok());
    while (scheduler.Stats().running == 0) std::this_thread::yield();
    auto waiting = scheduler.Submit(
        "waiting", CompilePriority::kPrefetch,
        []() -> absl::StatusOr<ArtifactPtr> { return MakeArtifact("w"); });
    ASSERT_TRUE(waiting.ok());
    queued = waiting->ticket;
    std::thread releaser([&] {
      absl::SleepFor(absl::Milliseconds(50));
      release.Notify();
    });
    releaser.detach();
  }  // destructor: cancels "waiting", lets "running" finish
  auto result = queued->Wait(absl::InfiniteFuture());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled);
}

TEST(CompileSchedulerTest, QueueBoundIsEnforced) {
  CompileScheduler scheduler({.threads = 1, .max_queued = 2});
  absl::Notification release;
  auto blocker = scheduler.Submit("blocker", CompilePriority::kForeground,
                                  [&]() -> absl::StatusOr<ArtifactPtr> {
                                    release.WaitForNotification();
                                    return MakeArtifact("b");
                                  });
  ASSERT_TRUE(blocker.ok());
  while (scheduler.Stats().running == 0) std::this_thread::yield();
  auto quick = []() -> absl::StatusOr<ArtifactPtr> {
    return MakeArtifact("q");
  };
  EXPECT_TRUE(scheduler.Submit("a", CompilePriority::kPrefetch, quick).ok());
  EXPECT_TRUE(scheduler.Submit("b", CompilePriority::kPrefetch, quick).ok());
  auto refused = scheduler.Submit("c", CompilePriority::kPrefetch, quick);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  release.Notify();
}

// Runs `compile` on the only thread until `release`, so that whatever is
// submitted next queues.
std::shared_ptr<const CompileTicket> OccupyTheOnlyThread(
    CompileScheduler& scheduler, absl::Notification& release) {
  auto blocker = scheduler.Submit("blocker", CompilePriority::kForeground,
                                  [&]() -> absl::StatusOr<ArtifactPtr> {
                                    release.WaitForNotification();
                                    return MakeArtifact("blocker");
                                  });
  EXPECT_TRUE(blocker.ok());
  while (scheduler.Stats().running == 0) std::this_thread::yield();
  return blocker.ok() ? blocker->ticket : nullptr;
}

CompileFunction Quick(const std::string& tag) {
  return [tag]() -> absl::StatusOr<ArtifactPtr> { return MakeArtifact(tag); };
}

// At SIGTERM the daemon drops queued prefetch work at once; a prefetch job a
// foreground request joined is foreground work now and gets the grace
// period like any other.
TEST(CompileSchedulerTest, PrefetchOnlyCancelSparesPromotedJobs) {
  absl::Notification release;  // outlives the scheduler's threads
  CompileScheduler scheduler({.threads = 1});
  // Released on every path out, so that a failed assertion cannot leave
  // the scheduler's destructor joining a blocked thread.
  absl::Cleanup unblock = [&] {
    if (!release.HasBeenNotified()) release.Notify();
  };
  auto blocker = OccupyTheOnlyThread(scheduler, release);
  auto promoted = scheduler.Submit("p", CompilePriority::kPrefetch, Quick("p"));
  auto joined = scheduler.Submit("p", CompilePriority::kForeground, Quick("x"));
  auto dropped = scheduler.Submit("q", CompilePriority::kPrefetch, Quick("q"));
  ASSERT_TRUE(promoted.ok() && joined.ok() && dropped.ok());
  ASSERT_TRUE(joined->joined_existing);

  scheduler.CancelQueued(/*prefetch_only=*/true);
  EXPECT_EQ(dropped->ticket->Wait(absl::InfiniteFuture()).status().code(),
            absl::StatusCode::kCancelled);
  EXPECT_FALSE(joined->ticket->Done());
  EXPECT_EQ(scheduler.Stats().queued, 1);
  std::move(unblock).Invoke();
  auto result = joined->ticket->Wait(absl::InfiniteFuture());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ((*result)->cubin, "cubin-p");
  EXPECT_EQ(scheduler.Stats().compiles, 2);  // the blocker and "p"
}

// A full queue of prefetch work must not lock foreground requests out: the
// newest queued prefetch job nobody waits on in the foreground makes room.
TEST(CompileSchedulerTest, ForegroundDisplacesQueuedPrefetchWhenFull) {
  absl::Notification release;  // outlives the scheduler's threads
  CompileScheduler scheduler({.threads = 1, .max_queued = 3});
  // Released on every path out, so that a failed assertion cannot leave
  // the scheduler's destructor joining a blocked thread.
  absl::Cleanup unblock = [&] {
    if (!release.HasBeenNotified()) release.Notify();
  };
  auto blocker = OccupyTheOnlyThread(scheduler, release);
  auto oldest = scheduler.Submit("a", CompilePriority::kPrefetch, Quick("a"));
  auto wanted = scheduler.Submit("b", CompilePriority::kPrefetch, Quick("b"));
  auto newest = scheduler.Submit("c", CompilePriority::kPrefetch, Quick("c"));
  ASSERT_TRUE(oldest.ok() && wanted.ok() && newest.ok());
  // "b" is promoted: a foreground request waits on it.
  ASSERT_TRUE(
      scheduler.Submit("b", CompilePriority::kForeground, Quick("x")).ok());
  // Prefetch work is still refused when full.
  EXPECT_EQ(scheduler.Submit("d", CompilePriority::kPrefetch, Quick("d"))
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);

  auto first =
      scheduler.Submit("f1", CompilePriority::kForeground, Quick("f1"));
  ASSERT_TRUE(first.ok()) << first.status();
  auto displaced = newest->ticket->Wait(absl::InfiniteFuture());
  EXPECT_EQ(displaced.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(displaced.status().message().find("displaced by foreground work"),
            std::string::npos)
      << displaced.status();
  auto second =
      scheduler.Submit("f2", CompilePriority::kForeground, Quick("f2"));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(oldest->ticket->Wait(absl::InfiniteFuture()).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(scheduler.Stats().queued, 3);  // b, f1, f2
  // Only foreground work is queued now: the bound holds for it too.
  EXPECT_EQ(scheduler.Submit("f3", CompilePriority::kForeground, Quick("f3"))
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);

  std::move(unblock).Invoke();
  for (const auto* ticket :
       {&wanted->ticket, &first->ticket, &second->ticket}) {
    EXPECT_TRUE((*ticket)->Wait(absl::InfiniteFuture()).ok());
  }
  // A displaced job is not a failed compile: asked again, it runs.
  auto again = scheduler.Submit("c", CompilePriority::kPrefetch, Quick("c"));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->ticket->Wait(absl::InfiniteFuture()).ok());
  EXPECT_EQ(scheduler.Stats().compile_failures, 0);
}

}  // namespace
}  // namespace hummingd
