// KernelClient against the real daemon: the same sets as hummingctl and the
// raw RPC, memoization, streaming prefetch, and surviving a daemon restart.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/client/client_test_util.h"

namespace hummingd::testing {
namespace {

using client::KernelClient;
using client::ResolveMode;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

class ClientDaemonTest : public DaemonTest {
 protected:
  std::unique_ptr<KernelClient> Connect(int reconnect_wait_ms = 10000) {
    client::ClientOptions options =
        ClientOptionsFor(ResolveMode::kDaemon, SocketPath(), CacheDir());
    options.reconnect_wait_ms = reconnect_wait_ms;
    auto created = KernelClient::Create(options);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? *std::move(created) : nullptr;
  }
};

TEST_F(ClientDaemonTest, SetsEqualHummingctlAndTheRawRpc) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto kernel_client = Connect();
  ASSERT_NE(kernel_client, nullptr);
  EXPECT_EQ(kernel_client->mode(), ResolveMode::kDaemon);

  const std::string spec =
      "weight=uint4,group=64,scale=bf16,zero=int,act=bf16,out=bf16";
  auto resolved =
      kernel_client->Resolve(LayerRequest(768, 1024, "sm_80", spec));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  const v1::KernelSet& set = **resolved;
  ASSERT_GT(set.kernels_size(), 0);
  const auto cubins = CubinsByKey(set);
  ASSERT_FALSE(cubins.empty());

  // hummingctl get --out writes one file per artifact: the same keys, the
  // same bytes.
  const std::string out_dir = dir_.path() + "/cubins";
  CommandResult ctl =
      Ctl({"get", "--kind", "dequant", "--spec", spec, "--n", "768", "--k",
           "1024", "--arch", "sm_80", "--out", out_dir});
  ASSERT_EQ(ctl.exit_code, 0) << ctl.output;
  std::map<std::string, std::string> written;
  for (const auto& entry : std::filesystem::directory_iterator(out_dir)) {
    written[entry.path().stem().string()] = ReadFile(entry.path());
  }
  EXPECT_EQ(written, cubins);

  // The raw RPC gives the same set, field for field.
  auto stub = daemon->Stub();
  v1::GetKernelsResponse response;
  ASSERT_TRUE(
      Get(*stub, DequantRequest(768, 1024, spec, "sm_80"), &response).ok());
  EXPECT_EQ(WithoutCallFields(response.kernel_set()).SerializeAsString(),
            WithoutCallFields(set).SerializeAsString());

  // Memoized: a second resolve (even under another layer name) is the same
  // object and no RPC.
  const int64_t requests = Counter(*stub, "requests");
  v1::KernelRequest renamed = LayerRequest(768, 1024, "sm_80", spec);
  renamed.set_name("another.layer");
  auto again = kernel_client->Resolve(renamed);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->get(), resolved->get());
  EXPECT_EQ(Counter(*stub, "requests"), requests);
}

// max_m is part of the request's identity: a decode-only resolve and a
// full one of the same layer are two sets, each memoized on its own.
TEST_F(ClientDaemonTest, MaxMIsPartOfTheMemoKey) {
  auto daemon = StartDaemon({"--compile-threads", "2"});
  ASSERT_NE(daemon, nullptr);
  auto kernel_client = Connect();
  ASSERT_NE(kernel_client, nullptr);
  auto stub = daemon->Stub();
  v1::KernelRequest decode_request = LayerRequest(4096, 4096, "sm_80");
  decode_request.set_family(v1::KERNEL_FAMILY_GEMM);
  decode_request.set_max_m(8);
  v1::KernelRequest full_request = decode_request;
  full_request.clear_max_m();

  auto decode = kernel_client->Resolve(decode_request);
  ASSERT_TRUE(decode.ok()) << decode.status();
  auto full = kernel_client->Resolve(full_request);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_NE(decode->get(), full->get());
  EXPECT_EQ((*decode)->max_m(), 8u);
  EXPECT_EQ((*full)->max_m(), 0u);
  ASSERT_GT((*decode)->kernels_size(), 0);
  ASSERT_GT((*full)->kernels_size(), (*decode)->kernels_size());
  for (const v1::Kernel& kernel : (*decode)->kernels()) {
    EXPECT_LE(kernel.m_min(), 8);
  }

  const int64_t requests = Counter(*stub, "requests");
  auto decode_again = kernel_client->Resolve(decode_request);
  auto full_again = kernel_client->Resolve(full_request);
  ASSERT_TRUE(decode_again.ok() && full_again.ok());
  EXPECT_EQ(decode_again->get(), decode->get());
  EXPECT_EQ(full_again->get(), full->get());
  EXPECT_EQ(Counter(*stub, "requests"), requests);
}

TEST_F(ClientDaemonTest, InvalidRequestKeepsItsCodeAndField) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto kernel_client = Connect();
  ASSERT_NE(kernel_client, nullptr);
  auto resolved = kernel_client->Resolve(LayerRequest(512, 1000));
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(resolved.status().message().find("request.shape.k"),
            std::string::npos)
      << resolved.status();
}

TEST_F(ClientDaemonTest, ConcurrentResolvesShareOneSet) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto kernel_client = Connect();
  ASSERT_NE(kernel_client, nullptr);
  constexpr int kThreads = 4;
  std::vector<std::shared_ptr<const v1::KernelSet>> sets(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto resolved = kernel_client->Resolve(LayerRequest(256, 512));
      if (resolved.ok()) sets[i] = *resolved;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_NE(sets[i], nullptr) << "thread " << i;
    EXPECT_EQ(sets[i], sets[0]) << "thread " << i;
  }
  auto stub = daemon->Stub();
  EXPECT_EQ(Counter(*stub, "compiles"),
            static_cast<int64_t>(CubinsByKey(*sets[0]).size()));
}

TEST_F(ClientDaemonTest, PrefetchStreamsOneMessagePerItem) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto kernel_client = Connect();
  ASSERT_NE(kernel_client, nullptr);
  std::vector<v1::KernelRequest> requests = {
      LayerRequest(256, 256), LayerRequest(256, 1000), LayerRequest(512, 256)};
  requests[1].set_name("bad.layer");
  std::vector<v1::PrefetchProgress> seen;
  absl::Status status = kernel_client->Prefetch(
      requests, [&](const v1::PrefetchProgress& p) { seen.push_back(p); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("bad.layer"), std::string::npos) << status;
  ASSERT_EQ(seen.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(seen[i].index(), i);
  EXPECT_GT(seen[0].compiled(), 0);
  EXPECT_NE(seen[1].status_code(), 0);
  EXPECT_GT(seen[2].compiled(), 0);

  // Prefetched means cached: resolving is a hit.
  auto resolved = kernel_client->Resolve(requests[2]);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  for (const v1::Kernel& kernel : (*resolved)->kernels()) {
    EXPECT_EQ(kernel.outcome(), v1::CACHE_OUTCOME_HIT);
  }
}

TEST_F(ClientDaemonTest, NewRequestAfterDaemonRestart) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto kernel_client = Connect();
  ASSERT_NE(kernel_client, nullptr);
  ASSERT_TRUE(kernel_client->Resolve(LayerRequest(256, 512)).ok());

  auto stopped = daemon->Stop();
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);

  auto resolved = kernel_client->Resolve(LayerRequest(512, 512));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_GT((*resolved)->kernels_size(), 0);
  EXPECT_EQ(kernel_client->mode(), ResolveMode::kDaemon);
}

TEST_F(ClientDaemonTest, CallDuringRestartIsRetriedOnceTheDaemonIsBack) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto kernel_client = Connect(/*reconnect_wait_ms=*/30000);
  ASSERT_NE(kernel_client, nullptr);
  ASSERT_TRUE(kernel_client->Resolve(LayerRequest(256, 512)).ok());
  ASSERT_TRUE(daemon->Stop().ok());

  // The call starts while no daemon runs: its first attempt fails at once,
  // the retry waits for the new daemon.
  absl::StatusOr<std::shared_ptr<const v1::KernelSet>> resolved =
      absl::UnknownError("not run");
  std::thread caller(
      [&] { resolved = kernel_client->Resolve(LayerRequest(256, 768)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  daemon = StartDaemon();
  caller.join();
  ASSERT_NE(daemon, nullptr);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_GT((*resolved)->kernels_size(), 0);
}

TEST_F(ClientDaemonTest, DaemonGoneForGoodIsUnavailableNamingTheSocket) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto kernel_client = Connect(/*reconnect_wait_ms=*/300);
  ASSERT_NE(kernel_client, nullptr);
  ASSERT_TRUE(daemon->Stop().ok());
  const auto started = std::chrono::steady_clock::now();
  auto resolved = kernel_client->Resolve(LayerRequest(256, 512));
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(resolved.status().message().find(SocketPath()), std::string::npos)
      << resolved.status();
  EXPECT_LT(std::chrono::steady_clock::now() - started,
            std::chrono::seconds(10));
}

}  // namespace
}  // namespace hummingd::testing
