// Hit after miss, hit after restart, eviction under the byte bound.

#include <set>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/launch_abi.h"
#include "tests/integration/daemon_test_util.h"

namespace hummingd::testing {
namespace {

class CacheBehaviourTest : public DaemonTest {};

TEST_F(CacheBehaviourTest, MissThenHitServesIdenticalBytes) {
  auto daemon = StartDaemon({"--compile-threads", "2"});
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();

  v1::GetKernelsResponse first;
  ASSERT_TRUE(Get(*stub, DequantRequest(4096, 4096), &first).ok());
  ASSERT_EQ(first.kernel_set().kernels_size(), 1);
  const v1::Kernel& compiled = first.kernel_set().kernels(0);
  EXPECT_EQ(compiled.outcome(), v1::CACHE_OUTCOME_COMPILED);
  EXPECT_GT(compiled.cubin().size(), 1000u);
  EXPECT_EQ(compiled.entry(), "hummingd_dequant");
  EXPECT_GT(compiled.compile_ms(), 0.0);
  // The compiler's register count, read from the cubin and kept with it.
  EXPECT_GE(compiled.registers(), 1);
  EXPECT_LE(compiled.registers(), 255);
  EXPECT_GT(compiled.launch().block_x(), 0);
  EXPECT_GT(compiled.launch().grid_x(), 0);

  v1::GetKernelsResponse second;
  ASSERT_TRUE(Get(*stub, DequantRequest(4096, 4096), &second).ok());
  const v1::Kernel& hit = second.kernel_set().kernels(0);
  EXPECT_EQ(hit.outcome(), v1::CACHE_OUTCOME_HIT);
  EXPECT_EQ(hit.cubin(), compiled.cubin());
  EXPECT_EQ(hit.artifact_key(), compiled.artifact_key());
  EXPECT_EQ(hit.registers(), compiled.registers());
  EXPECT_TRUE(second.kernel_set().plan_cached());

  EXPECT_EQ(Counter(*stub, "compiles"), 1);
  EXPECT_GE(Counter(*stub, "hits"), 1);
  EXPECT_EQ(Counter(*stub, "entries"), 1);
  EXPECT_GT(Counter(*stub, "bytes"),
            static_cast<int64_t>(hit.cubin().size()) - 1);
}

TEST_F(CacheBehaviourTest, RestartServesFromDiskWithZeroCompiles) {
  std::string cubin;
  {
    auto daemon = StartDaemon();
    ASSERT_NE(daemon, nullptr);
    auto stub = daemon->Stub();
    v1::GetKernelsResponse response;
    ASSERT_TRUE(Get(*stub, DequantRequest(6144, 4096), &response).ok());
    cubin = response.kernel_set().kernels(0).cubin();
    auto exit_code = daemon->Stop();
    ASSERT_TRUE(exit_code.ok()) << exit_code.status();
    EXPECT_EQ(*exit_code, 0);
  }
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  v1::GetKernelsResponse response;
  ASSERT_TRUE(Get(*stub, DequantRequest(6144, 4096), &response).ok());
  EXPECT_EQ(response.kernel_set().kernels(0).outcome(), v1::CACHE_OUTCOME_HIT);
  EXPECT_EQ(response.kernel_set().kernels(0).cubin(), cubin);
  EXPECT_EQ(Counter(*stub, "compiles"), 0);
}

TEST_F(CacheBehaviourTest, EvictionKeepsTheStoreUnderItsBound) {
  // Size one artifact first, then bound the cache to about three of them.
  int64_t artifact_bytes = 0;
  {
    auto daemon = StartDaemon();
    ASSERT_NE(daemon, nullptr);
    auto stub = daemon->Stub();
    v1::GetKernelsResponse response;
    ASSERT_TRUE(Get(*stub, DequantRequest(256, 256), &response).ok());
    artifact_bytes = Counter(*stub, "bytes");
    ASSERT_GT(artifact_bytes, 0);
    ASSERT_TRUE(daemon->Stop().ok());
  }
  const int64_t bound = std::max<int64_t>(
      artifact_bytes * 3 + artifact_bytes / 2, int64_t{1} << 20);
  const int kernels_to_fit = static_cast<int>(bound / artifact_bytes);
  auto daemon = StartDaemon(
      {"--max-cache-bytes", std::to_string(bound), "--compile-threads", "2"});
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  const int requests = kernels_to_fit + 3;
  for (int i = 0; i < requests; ++i) {
    v1::GetKernelsResponse response;
    ASSERT_TRUE(
        Get(*stub, DequantRequest(256 + 32 * (i + 1), 256), &response).ok());
    EXPECT_LE(Counter(*stub, "bytes"), bound) << "after request " << i;
  }
  EXPECT_GE(Counter(*stub, "evictions"), 3);
  EXPECT_LT(Counter(*stub, "entries"), requests + 1);
  // The most recent kernel survived eviction: asking again is a hit.
  v1::GetKernelsResponse again;
  ASSERT_TRUE(
      Get(*stub, DequantRequest(256 + 32 * requests, 256), &again).ok());
  EXPECT_EQ(again.kernel_set().kernels(0).outcome(), v1::CACHE_OUTCOME_HIT);
}

}  // namespace
}  // namespace hummingd::testing

namespace hummingd::testing {
namespace {

TEST_F(CacheBehaviourTest, GemmSetsCarryEveryRangeAndTheRepackKernel) {
  auto daemon = StartDaemon({"--compile-threads", "2"});
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  v1::GetKernelsRequest request = DequantRequest(4096, 4096);
  request.mutable_request()->set_family(v1::KERNEL_FAMILY_GEMM);
  v1::GetKernelsResponse first;
  grpc::Status status = Get(*stub, request, &first);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const v1::KernelSet& set = first.kernel_set();
  ASSERT_GE(set.kernels_size(), 2);
  EXPECT_EQ(set.kernels(0).m_min(), 1);
  for (int i = 1; i < set.kernels_size(); ++i) {
    EXPECT_EQ(set.kernels(i).m_min(), set.kernels(i - 1).m_max() + 1);
  }
  for (const v1::Kernel& kernel : set.kernels()) {
    EXPECT_EQ(kernel.entry(), "hummingd_gemm");
    EXPECT_TRUE(kernel.role().empty());
    EXPECT_GT(kernel.launch().m_per_block_x(), 0);
    if (kernel.launch().grid_z() > 1) {
      EXPECT_GT(kernel.launch().workspace_bytes_per_m_block(), 0);
      EXPECT_GT(kernel.launch().counter_bytes_per_m_block(), 0);
    }
  }
  ASSERT_EQ(set.prepare_size(), 1);
  EXPECT_EQ(set.prepare(0).role(), "repack");
  EXPECT_EQ(set.prepare(0).entry(), "hummingd_repack");
  EXPECT_GT(set.prepare(0).cubin().size(), 1000u);
  EXPECT_EQ(set.shape().n(), 4096);
  EXPECT_EQ(set.family(), v1::KERNEL_FAMILY_GEMM);

  // Distinct configs compile once each; the repack is one more.
  std::set<std::string> distinct;
  for (const v1::Kernel& kernel : set.kernels()) {
    distinct.insert(kernel.artifact_key());
  }
  EXPECT_EQ(Counter(*stub, "compiles"),
            static_cast<int64_t>(distinct.size()) + 1);

  v1::GetKernelsResponse second;
  ASSERT_TRUE(Get(*stub, request, &second).ok());
  for (const auto* kernels :
       {&second.kernel_set().kernels(), &second.kernel_set().prepare()}) {
    for (const v1::Kernel& kernel : *kernels) {
      EXPECT_EQ(kernel.outcome(), v1::CACHE_OUTCOME_HIT);
    }
  }
  EXPECT_EQ(second.kernel_set().prepare(0).cubin(), set.prepare(0).cubin());
}

// A client built before launch_abi (the field absent: the original
// GemmArgs::scales, the checkpoint tensor) is never served a layout=kmajor
// kernel or a 128-token one, and never shares a plan record with a current
// client; the tiles both plans have in common are one artifact each.
TEST_F(CacheBehaviourTest, GemmPlansFollowTheClientsLaunchAbi) {
  auto daemon = StartDaemon({"--compile-threads", "2"});
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  // 11776 x 8192 W4 on Hopper: 256-row decode tiles at 8 and 16 tokens,
  // k-major for current clients (92 128-row blocks fill too little of a
  // wave for the 128-row long-split tiles of planner v16 / v18, which the
  // issue's layers take).
  v1::GetKernelsRequest old_request = DequantRequest(11776, 8192);
  old_request.mutable_request()->set_family(v1::KERNEL_FAMILY_GEMM);
  old_request.set_metadata_only(true);
  ASSERT_EQ(old_request.request().launch_abi(), 0u);
  v1::GetKernelsRequest current_request = old_request;
  current_request.mutable_request()->set_launch_abi(kCurrentLaunchAbi);

  v1::GetKernelsResponse old_response;
  grpc::Status status = Get(*stub, old_request, &old_response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  v1::GetKernelsResponse current_response;
  status = Get(*stub, current_request, &current_response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const v1::KernelSet& old_set = old_response.kernel_set();
  const v1::KernelSet& current_set = current_response.kernel_set();

  // The current client's plan was made for it, not read from the record
  // the old client's request left.
  EXPECT_NE(old_set.plan_key(), current_set.plan_key());
  EXPECT_FALSE(current_set.plan_cached());
  ASSERT_GE(old_set.kernels_size(), 4);
  for (const v1::Kernel& old_kernel : old_set.kernels()) {
    const std::string& config = old_kernel.config();
    EXPECT_EQ(config.find("layout=kmajor"), std::string::npos) << config;
    EXPECT_EQ(config.find("order=grouped"), std::string::npos) << config;
    EXPECT_FALSE((absl::StartsWith(config, "tile=128x") ||
                  absl::StartsWith(config, "tile=256x")) &&
                 absl::StrContains(config, "mma=wgmma"))
        << config;
  }
  // Where the plans' ranges differ (the current one has 128- and 256-token
  // tiles between 64-token ones), each current kernel is compared with the
  // old kernel serving its smallest M.
  auto old_kernel_for = [&](int64_t m) -> const v1::Kernel* {
    for (const v1::Kernel& kernel : old_set.kernels()) {
      if (kernel.m_min() <= m && m <= kernel.m_max()) return &kernel;
    }
    return nullptr;
  };
  int k_major = 0;
  int wide_tokens = 0;
  int widest_tokens = 0;
  for (const v1::Kernel& current : current_set.kernels()) {
    const v1::Kernel* old_kernel = old_kernel_for(current.m_min());
    ASSERT_NE(old_kernel, nullptr) << current.m_min();
    const std::string& old_config = old_kernel->config();
    const std::string& current_config = current.config();
    if (absl::StartsWith(current_config, "tile=128x") ||
        absl::StartsWith(current_config, "tile=256x")) {
      // Above M = 128, the 128-token tiles of launch ABI 3 (planners v29
      // to v32), and above 960 the 256-token ones of ABI 4 (planner v33),
      // where the old client keeps the 64-token ones.
      ++(absl::StartsWith(current_config, "tile=128x") ? wide_tokens
                                                       : widest_tokens);
      EXPECT_TRUE(absl::StartsWith(old_config, "tile=64x")) << old_config;
      EXPECT_NE(current.artifact_key(), old_kernel->artifact_key());
    } else if (current_config.find("layout=kmajor") != std::string::npos) {
      ++k_major;
      EXPECT_EQ(current_config, old_config + ",layout=kmajor");
      EXPECT_NE(current.artifact_key(), old_kernel->artifact_key());
    } else {
      EXPECT_EQ(current_config, old_config);
      EXPECT_EQ(current.artifact_key(), old_kernel->artifact_key());
      EXPECT_EQ(current.outcome(), v1::CACHE_OUTCOME_HIT);
    }
  }
  EXPECT_EQ(k_major, 2);
  EXPECT_EQ(wide_tokens, 3);
  EXPECT_EQ(widest_tokens, 2);
}

}  // namespace
}  // namespace hummingd::testing
