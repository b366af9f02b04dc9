// Single-flight: identical concurrent requests compile once.

#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/daemon_test_util.h"

namespace hummingd::testing {
namespace {

class ConcurrencyTest : public DaemonTest {};

TEST_F(ConcurrencyTest, ThirtyTwoIdenticalRequestsCompileOnce) {
  auto daemon = StartDaemon({"--compile-threads", "2"});
  ASSERT_NE(daemon, nullptr);
  constexpr int kClients = 32;
  std::vector<v1::GetKernelsResponse> responses(kClients);
  std::vector<grpc::Status> statuses(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      // One channel per client so the requests really arrive concurrently.
      auto stub = v1::KernelService::NewStub(daemon->Channel());
      statuses[i] = Get(*stub,
                        DequantRequest(8192, 8192,
                                       "weight=uint3,group=64,scale=bf16,"
                                       "zero=int,act=bf16,out=bf16"),
                        &responses[i]);
    });
  }
  for (auto& client : clients) client.join();

  int compiled = 0;
  for (int i = 0; i < kClients; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << i << ": " << statuses[i].error_message();
    const v1::Kernel& kernel = responses[i].kernel_set().kernels(0);
    EXPECT_EQ(kernel.cubin(), responses[0].kernel_set().kernels(0).cubin());
    if (kernel.outcome() == v1::CACHE_OUTCOME_COMPILED) ++compiled;
  }
  // The one compile is reported to the request that ran it; the others
  // shared it or hit the cache.
  EXPECT_EQ(compiled, 1);
  auto stub = daemon->Stub();
  EXPECT_EQ(Counter(*stub, "compiles"), 1);
}

TEST_F(ConcurrencyTest, DifferentRequestsCompileInParallelAndAllSucceed) {
  auto daemon = StartDaemon({"--compile-threads", "2"});
  ASSERT_NE(daemon, nullptr);
  constexpr int kClients = 6;
  std::vector<grpc::Status> statuses(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      auto stub = v1::KernelService::NewStub(daemon->Channel());
      v1::GetKernelsResponse response;
      statuses[i] = Get(*stub, DequantRequest(1024 + 128 * i, 1024), &response);
    });
  }
  for (auto& client : clients) client.join();
  for (int i = 0; i < kClients; ++i) {
    EXPECT_TRUE(statuses[i].ok()) << statuses[i].error_message();
  }
  auto stub = daemon->Stub();
  EXPECT_EQ(Counter(*stub, "compiles"), kClients);
  EXPECT_EQ(Counter(*stub, "entries"), kClients);
}

// A request refused for a full compile queue leaves nothing behind: its plan
// is stored only once every kernel is cached or admitted, so a client
// looping over shapes cannot grow the plan records with refused requests.
TEST_F(ConcurrencyTest, RequestsRefusedForAFullQueueLeaveNoPlan) {
  auto daemon =
      StartDaemon({"--compile-threads", "1", "--max-queued-compiles", "1"});
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  v1::PrefetchRequest prefetch;
  constexpr int kItems = 24;
  for (int i = 0; i < kItems; ++i) {
    *prefetch.add_requests() = DequantRequest(256 + 32 * i, 1024).request();
  }
  const PrefetchResult result = Prefetch(*stub, prefetch);
  int served = 0;
  int refused = 0;
  for (const v1::PrefetchProgress& progress : result.progress) {
    if (progress.status_code() == 0) {
      ++served;
    } else {
      EXPECT_EQ(progress.status_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
          << progress.status_message();
      ++refused;
    }
  }
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_EQ(served + refused, kItems);
  ASSERT_GT(refused, 0) << "the queue bound refused nothing: nothing to tell";
  ASSERT_GT(served, 0);
  EXPECT_EQ(Counter(*stub, "plan_entries"), served);
}

}  // namespace
}  // namespace hummingd::testing
