// How KernelClient picks its source without a daemon: kDaemon fails naming
// the socket, kAuto falls back to embedded mode, whose sets equal the
// daemon's byte for byte.

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "kernels/launch_abi.h"
#include "tests/integration/client/client_test_util.h"

namespace hummingd::testing {
namespace {

using client::KernelClient;
using client::ResolveMode;

class ClientModeTest : public DaemonTest {
 protected:
  std::string EmbeddedDir() const { return dir_.path() + "/embedded"; }
};

// A socket file nobody listens on, as a crashed daemon leaves behind.
void MakeStaleSocket(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0)
      << std::strerror(errno);
  close(fd);
}

TEST_F(ClientModeTest, DaemonModeWithoutDaemonIsUnavailableNamingTheSocket) {
  auto created = KernelClient::Create(
      ClientOptionsFor(ResolveMode::kDaemon, SocketPath(), EmbeddedDir()));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(created.status().message().find(SocketPath()), std::string::npos)
      << created.status();
}

TEST_F(ClientModeTest, DaemonModeWithStaleSocketIsUnavailableWithinTimeout) {
  MakeStaleSocket(SocketPath());
  client::ClientOptions options =
      ClientOptionsFor(ResolveMode::kDaemon, SocketPath(), EmbeddedDir());
  options.connect_timeout_ms = 300;
  const auto started = std::chrono::steady_clock::now();
  auto created = KernelClient::Create(options);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(created.status().message().find(SocketPath()), std::string::npos)
      << created.status();
  EXPECT_LT(std::chrono::steady_clock::now() - started,
            std::chrono::seconds(5));
}

TEST_F(ClientModeTest, BadOptionsNameTheField) {
  client::ClientOptions options =
      ClientOptionsFor(ResolveMode::kEmbedded, SocketPath(), EmbeddedDir());
  options.timeout_seconds = 0;
  auto created = KernelClient::Create(options);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(created.status().message().find("timeout_seconds"),
            std::string::npos)
      << created.status();
}

TEST_F(ClientModeTest, AutoWithoutDaemonIsEmbeddedAndMatchesTheDaemon) {
  const v1::KernelRequest request =
      LayerRequest(1024, 512, "sm_90a",
                   "weight=e2m1,group=32,scale=ue8m0,act=bf16,out=bf16");
  std::shared_ptr<const v1::KernelSet> embedded_set;
  {
    auto created = KernelClient::Create(
        ClientOptionsFor(ResolveMode::kAuto, SocketPath(), EmbeddedDir()));
    ASSERT_TRUE(created.ok()) << created.status();
    EXPECT_EQ((*created)->mode(), ResolveMode::kEmbedded);
    auto resolved = (*created)->Resolve(request);
    ASSERT_TRUE(resolved.ok()) << resolved.status();
    embedded_set = *resolved;
    ASSERT_GT(embedded_set->kernels_size(), 0);
    for (const v1::Kernel& kernel : embedded_set->kernels()) {
      EXPECT_NE(kernel.outcome(), v1::CACHE_OUTCOME_HIT);
    }
  }

  // A daemon with its own cache compiles the same request separately.
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  v1::GetKernelsResponse response;
  v1::GetKernelsRequest rpc_request;
  *rpc_request.mutable_request() = request;
  ASSERT_TRUE(Get(*stub, rpc_request, &response).ok());
  EXPECT_EQ(Counter(*stub, "compiles"),
            static_cast<int64_t>(CubinsByKey(response.kernel_set()).size()));
  EXPECT_EQ(CubinsByKey(response.kernel_set()), CubinsByKey(*embedded_set));
  EXPECT_EQ(WithoutCallFields(response.kernel_set()).SerializeAsString(),
            WithoutCallFields(*embedded_set).SerializeAsString());

  // kAuto with the daemon up picks the daemon.
  auto created = KernelClient::Create(
      ClientOptionsFor(ResolveMode::kAuto, SocketPath(), EmbeddedDir()));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ((*created)->mode(), ResolveMode::kDaemon);
}

// The SDK launches with the current GemmArgs, so a request that leaves
// launch_abi unset is resolved for it: 11776 x 8192 W4 on Hopper gets its
// k-major 256-row 8- and 16-token decode tiles (a client of the original
// layout would not; the layers run 128-row tiles there since
// planner v16 / v18).
TEST_F(ClientModeTest, UnsetLaunchAbiIsTheClientsOwn) {
  v1::KernelRequest request = LayerRequest(11776, 8192, "sm_90a");
  request.set_family(v1::KERNEL_FAMILY_GEMM);
  ASSERT_EQ(request.launch_abi(), 0u);
  auto created = KernelClient::Create(
      ClientOptionsFor(ResolveMode::kEmbedded, SocketPath(), EmbeddedDir()));
  ASSERT_TRUE(created.ok()) << created.status();
  // Prefetch stamps the same ABI: the Resolve after it finds its plan.
  int prefetched = 0;
  absl::Status warmed = (*created)->Prefetch(
      {request}, [&](const v1::PrefetchProgress& progress) {
        prefetched += progress.status_code() == 0;
      });
  ASSERT_TRUE(warmed.ok()) << warmed;
  EXPECT_EQ(prefetched, 1);
  auto resolved = (*created)->Resolve(request);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_TRUE((*resolved)->plan_cached());
  // The set says which ABI it was planned for (LoadedKernelSet checks it).
  EXPECT_EQ((*resolved)->launch_abi(), kCurrentLaunchAbi);
  int k_major = 0;
  for (const v1::Kernel& kernel : (*resolved)->kernels()) {
    k_major += kernel.config().find("layout=kmajor") != std::string::npos;
  }
  EXPECT_EQ(k_major, 2);
}

// Embedded mode cuts a set by max_m as the daemon does (the same
// resolver): only the ranges up to it compile, and the full set's request
// then compiles only the rest.
TEST_F(ClientModeTest, EmbeddedModeHonoursMaxM) {
  auto created = KernelClient::Create(
      ClientOptionsFor(ResolveMode::kEmbedded, SocketPath(), EmbeddedDir()));
  ASSERT_TRUE(created.ok()) << created.status();
  v1::KernelRequest request = LayerRequest(4096, 4096, "sm_80");
  request.set_family(v1::KERNEL_FAMILY_GEMM);
  request.set_max_m(8);
  auto decode = (*created)->Resolve(request);
  ASSERT_TRUE(decode.ok()) << decode.status();
  EXPECT_EQ((*decode)->max_m(), 8u);
  ASSERT_GT((*decode)->kernels_size(), 0);
  std::set<std::string> decode_keys;
  for (const v1::Kernel& kernel : (*decode)->kernels()) {
    EXPECT_LE(kernel.m_min(), 8);
    EXPECT_EQ(kernel.outcome(), v1::CACHE_OUTCOME_COMPILED);
    decode_keys.insert(kernel.artifact_key());
  }

  request.clear_max_m();
  auto full = (*created)->Resolve(request);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ((*full)->plan_key(), (*decode)->plan_key());
  ASSERT_GT((*full)->kernels_size(), (*decode)->kernels_size());
  int compiled = 0;
  for (const v1::Kernel& kernel : (*full)->kernels()) {
    const bool shared = decode_keys.count(kernel.artifact_key()) > 0;
    EXPECT_EQ(kernel.outcome(),
              shared ? v1::CACHE_OUTCOME_HIT : v1::CACHE_OUTCOME_COMPILED)
        << kernel.m_min();
    compiled += !shared;
  }
  EXPECT_GT(compiled, 0);
  EXPECT_EQ((*full)->prepare(0).outcome(), v1::CACHE_OUTCOME_HIT);
}

TEST_F(ClientModeTest, EmbeddedCacheSurvivesReopenAndIsLocked) {
  const v1::KernelRequest request = LayerRequest(256, 256);
  {
    auto first = KernelClient::Create(
        ClientOptionsFor(ResolveMode::kEmbedded, SocketPath(), EmbeddedDir()));
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_TRUE((*first)->Resolve(request).ok());

    // One process per directory: a second opener is refused.
    auto second = KernelClient::Create(
        ClientOptionsFor(ResolveMode::kEmbedded, SocketPath(), EmbeddedDir()));
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition)
        << second.status();
  }
  auto reopened = KernelClient::Create(
      ClientOptionsFor(ResolveMode::kEmbedded, SocketPath(), EmbeddedDir()));
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  auto resolved = (*reopened)->Resolve(request);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  for (const v1::Kernel& kernel : (*resolved)->kernels()) {
    EXPECT_EQ(kernel.outcome(), v1::CACHE_OUTCOME_HIT);
  }
}

TEST_F(ClientModeTest, EmbeddedPrefetchReportsEveryItem) {
  auto created = KernelClient::Create(
      ClientOptionsFor(ResolveMode::kEmbedded, SocketPath(), EmbeddedDir()));
  ASSERT_TRUE(created.ok()) << created.status();
  std::vector<v1::KernelRequest> requests = {LayerRequest(256, 1000),
                                             LayerRequest(512, 256)};
  requests[0].set_name("bad.layer");
  std::vector<v1::PrefetchProgress> seen;
  absl::Status status = (*created)->Prefetch(
      requests, [&](const v1::PrefetchProgress& p) { seen.push_back(p); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("bad.layer"), std::string::npos) << status;
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_NE(seen[0].status_code(), 0);
  EXPECT_EQ(seen[1].status_code(), 0);
  EXPECT_GT(seen[1].compiled(), 0);
  EXPECT_EQ(seen[1].total(), 2);

  auto resolved = (*created)->Resolve(requests[1]);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  for (const v1::Kernel& kernel : (*resolved)->kernels()) {
    EXPECT_EQ(kernel.outcome(), v1::CACHE_OUTCOME_HIT);
  }
}

}  // namespace
}  // namespace hummingd::testing
