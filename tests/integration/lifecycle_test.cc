// Startup and shutdown: flags, socket permissions, one daemon per cache dir,
// SIGTERM.

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "kernels/launch_abi.h"
#include "tests/integration/daemon_test_util.h"

namespace hummingd::testing {
namespace {

class LifecycleTest : public DaemonTest {};

TEST_F(LifecycleTest, SocketIsCreatedWithMode0660AndSigtermExitsCleanly) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  struct stat info {};
  ASSERT_EQ(stat(SocketPath().c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0660u);
  auto exit_code = daemon->Stop();
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  EXPECT_EQ(*exit_code, 0);
  const std::string log = daemon->ReadLog();
  EXPECT_NE(log.find("config compile-threads="), std::string::npos) << log;
  EXPECT_NE(log.find("phase=closed"), std::string::npos) << log;
}

TEST_F(LifecycleTest, SecondDaemonOnTheSameCacheDirFailsFast) {
  auto first = StartDaemon();
  ASSERT_NE(first, nullptr);
  CommandResult second =
      RunCommand({DaemonProcess::BinaryPath(), "--socket",
                  dir_.path() + "/other.sock", "--cache-dir", CacheDir()},
                 30);
  EXPECT_NE(second.exit_code, 0);
  EXPECT_NE(second.output.find("locked by another process"), std::string::npos)
      << second.output;
  // The first one is unaffected.
  auto stub = first->Stub();
  EXPECT_GE(Counter(*stub, "uptime_seconds"), 0);
}

TEST_F(LifecycleTest, SecondDaemonOnTheSameSocketFailsFast) {
  auto first = StartDaemon();
  ASSERT_NE(first, nullptr);
  CommandResult second =
      RunCommand({DaemonProcess::BinaryPath(), "--socket", SocketPath(),
                  "--cache-dir", dir_.path() + "/other-cache"},
                 30);
  EXPECT_NE(second.exit_code, 0);
  EXPECT_NE(second.output.find("already listening"), std::string::npos)
      << second.output;
}

TEST_F(LifecycleTest, BadFlagValuesAreRefusedAtStartup) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--compile-threads", "-3"}, "--compile-threads"},
      {{"--compile-threads", "abc"}, "compile_threads"},
      {{"--max-cache-bytes", "10"}, "--max-cache-bytes"},
      {{"--socket-mode", "0999"}, "--socket-mode"},
      {{"--log-level", "loud"}, "--log-level"},
  };
  for (const auto& [flags, named] : cases) {
    std::vector<std::string> argv = {DaemonProcess::BinaryPath(), "--socket",
                                     SocketPath(), "--cache-dir", CacheDir()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    CommandResult result = RunCommand(argv, 30);
    EXPECT_NE(result.exit_code, 0) << flags[0];
    EXPECT_NE(result.output.find(named), std::string::npos)
        << flags[0] << ": " << result.output;
  }
}

TEST_F(LifecycleTest, StaleSocketFromACrashIsReplaced) {
  {
    auto daemon = StartDaemon();
    ASSERT_NE(daemon, nullptr);
    daemon->Kill();
  }
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  EXPECT_EQ(Counter(*stub, "compiles"), 0);
}

}  // namespace
}  // namespace hummingd::testing

namespace hummingd::testing {
namespace {

TEST_F(LifecycleTest, OptionalTcpListenerServesTheSameService) {
  auto daemon = StartDaemon({"--listen", "127.0.0.1:0"});
  ASSERT_NE(daemon, nullptr);
  const std::string log = daemon->ReadLog();
  const size_t at = log.find("tcp_port=");
  ASSERT_NE(at, std::string::npos) << log;
  const int port = std::atoi(log.c_str() + at + 9);
  ASSERT_GT(port, 0) << log;
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::KernelService::NewStub(channel);
  v1::GetKernelsResponse response;
  ASSERT_TRUE(Get(*stub, DequantRequest(512, 512), &response).ok());
  EXPECT_EQ(response.kernel_set().kernels_size(), 1);
  // The unix socket sees the same cache.
  auto unix_stub = daemon->Stub();
  EXPECT_EQ(Counter(*unix_stub, "entries"), 1);
}

TEST_F(LifecycleTest, RequestDeadlineIsHonouredAndTheCompileGoesOn) {
  auto daemon = StartDaemon({"--compile-threads", "1"});
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  // A 25 ms deadline is far shorter than a compile (~60 ms) but, on a loaded
  // machine, can also expire before the request reaches the daemon. Try a few
  // kernels until the daemon has seen one of them.
  v1::GetKernelsRequest request;
  bool seen_by_daemon = false;
  for (int attempt = 0; attempt < 5 && !seen_by_daemon; ++attempt) {
    request = DequantRequest(8192 + 64 * attempt, 8192,
                             "weight=e5m2,group=tensor,scale=bf16,"
                             "scale2=channel,act=bf16,out=bf16");
    const int64_t before = Counter(*stub, "requests");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(25));
    v1::GetKernelsResponse response;
    grpc::Status status = stub->GetKernels(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
        << status.error_message();
    seen_by_daemon = Counter(*stub, "requests") > before;
  }
  ASSERT_TRUE(seen_by_daemon) << "no short-deadline request reached the daemon";
  // The compile goes on after the caller gave up, and lands in the cache.
  const std::string shape =
      absl::StrCat(" n=", request.request().shape().n(), " k=8192 ");
  auto cached = [&] {
    grpc::ClientContext context;
    v1::ListEntriesResponse listing;
    if (!stub->ListEntries(&context, v1::ListEntriesRequest(), &listing).ok()) {
      return false;
    }
    for (const v1::CacheEntry& entry : listing.entries()) {
      if (entry.description().find(shape) != std::string::npos) return true;
    }
    return false;
  };
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!cached() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(cached()) << "the abandoned compile never landed in the cache";
  const int64_t compiles = Counter(*stub, "compiles");
  v1::GetKernelsResponse response;
  ASSERT_TRUE(Get(*stub, request, &response).ok());
  EXPECT_EQ(response.kernel_set().kernels(0).outcome(), v1::CACHE_OUTCOME_HIT);
  EXPECT_EQ(Counter(*stub, "compiles"), compiles);
}

TEST_F(LifecycleTest, SigtermCancelsQueuedCompilesWhenTheGracePeriodEnds) {
  // One compile thread and many distinct GEMM sets queue far more compile
  // time than the grace period (each GEMM compile takes 150-300 ms).
  auto daemon =
      StartDaemon({"--compile-threads", "1", "--shutdown-grace-seconds", "1"});
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  constexpr int kCalls = 8;
  std::vector<std::thread> calls;
  std::vector<grpc::Status> statuses(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    calls.emplace_back([&, i] {
      v1::GetKernelsRequest request = DequantRequest(1024 * (i + 1), 4096);
      request.mutable_request()->set_family(v1::KERNEL_FAMILY_GEMM);
      request.mutable_request()->set_launch_abi(kCurrentLaunchAbi);
      request.set_metadata_only(true);
      v1::GetKernelsResponse response;
      statuses[i] = Get(*stub, request, &response);
    });
  }
  // Wait until every call is in the daemon and the queue holds work.
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((Counter(*stub, "requests") < kCalls ||
          Counter(*stub, "compiles_queued") < 30) &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const int64_t queued = Counter(*stub, "compiles_queued");
  ASSERT_GE(queued, 30) << "too little queued work to tell";

  const auto signalled = std::chrono::steady_clock::now();
  auto exit_code = daemon->Stop(/*timeout_seconds=*/120);
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - signalled)
                             .count();
  for (std::thread& call : calls) call.join();
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  EXPECT_EQ(*exit_code, 0);
  // Grace (1 s) + the one running compile + closing; running the queue of
  // >= 30 compiles would take far longer.
  EXPECT_LT(seconds, 6.0) << queued << " compiles were queued";
  // Calls still waiting when the grace period ends fail: CANCELLED from the
  // cancelled queue, or UNAVAILABLE when gRPC's own deadline cancels the
  // call first (the two race).
  int cut_short = 0;
  for (const grpc::Status& status : statuses) {
    if (status.ok()) continue;
    EXPECT_TRUE(status.error_code() == grpc::StatusCode::CANCELLED ||
                status.error_code() == grpc::StatusCode::UNAVAILABLE)
        << status.error_code() << ": " << status.error_message();
    ++cut_short;
  }
  EXPECT_GT(cut_short, 0);
  const std::string log = daemon->ReadLog();
  EXPECT_NE(log.find("phase=cancel_queued"), std::string::npos) << log;
}

// SIGTERM with a large Prefetch starting its items and a compile running:
// the daemon exits cleanly within the grace period (it crashed when the
// running compile outlived the resolver it stores through), and nothing
// queued after the cancel is compiled.
TEST_F(LifecycleTest, SigtermDuringALargePrefetchExitsCleanly) {
  auto daemon =
      StartDaemon({"--compile-threads", "1", "--shutdown-grace-seconds", "1",
                   "--max-queued-compiles", "100000"});
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  v1::PrefetchRequest prefetch;
  for (int i = 0; i < 2000; ++i) {
    v1::KernelRequest* item = prefetch.add_requests();
    *item = DequantRequest(64 * (i + 1), 4096).request();
    item->set_family(v1::KERNEL_FAMILY_GEMM);
    item->set_launch_abi(kCurrentLaunchAbi);
  }
  // Cut short by the shutdown: any status.
  std::thread client([&] { Prefetch(*stub, prefetch); });
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (Counter(*stub, "compiles_running") < 1 &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(Counter(*stub, "compiles_running"), 1);

  const auto signalled = std::chrono::steady_clock::now();
  auto exit_code = daemon->Stop(/*timeout_seconds=*/120);
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - signalled)
                             .count();
  client.join();
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  EXPECT_EQ(*exit_code, 0) << daemon->ReadLog().substr(0, 4000);
  const std::string log = daemon->ReadLog();
  // The shutdown's part of the log, for a failure's message.
  const size_t drain = log.find("phase=drain");
  ASSERT_NE(drain, std::string::npos) << log;
  EXPECT_LT(seconds, 6.0) << log.substr(drain, 4000);
  // At most the compiles running at the signal finish after it.
  int compiled_after = 0;
  for (size_t at = log.find("event=compiled", drain); at != std::string::npos;
       at = log.find("event=compiled", at + 1)) {
    ++compiled_after;
  }
  EXPECT_LE(compiled_after, 1) << log.substr(drain, 4000);
}

// The config table is what an operator reads to know how a daemon runs; a
// quieter log level must not hide it.
TEST_F(LifecycleTest, ConfigTableIsPrintedAtEveryLogLevel) {
  auto daemon = StartDaemon({"--log-level", "warn"});
  ASSERT_NE(daemon, nullptr);
  auto exit_code = daemon->Stop();
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  const std::string log = daemon->ReadLog();
  EXPECT_NE(log.find("config compile-threads="), std::string::npos) << log;
  EXPECT_NE(log.find("config log-level=warn"), std::string::npos) << log;
  // The level still applies to everything after the table.
  EXPECT_EQ(log.find("event=serving"), std::string::npos) << log;
}

}  // namespace
}  // namespace hummingd::testing
