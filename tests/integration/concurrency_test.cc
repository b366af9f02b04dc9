// Single-flight: identical concurrent requests compile once.

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

}  // namespace
}  // namespace hummingd::testing
