// KernelRequest.max_m against the real daemon: a GEMM request with max_m
// compiles and serves only the ranges up to it, shares the plan and its
// artifacts with the full request, is memoized apart from it, survives a
// restart as cache hits, and prefetch (manifest key and --max-m) warms the
// same cut.

#include <fstream>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/launch_abi.h"
#include "tests/integration/daemon_test_util.h"

namespace hummingd::testing {
namespace {

class MaxMTest : public DaemonTest {};

// W4 4096 x 4096 on Hopper, as hummingctl and the SDK send it: decode
// ranges up to 64 tokens, then the prefill tiles.
v1::GetKernelsRequest GemmRequest(uint32_t max_m) {
  v1::GetKernelsRequest request = DequantRequest(4096, 4096);
  request.mutable_request()->set_family(v1::KERNEL_FAMILY_GEMM);
  request.mutable_request()->set_launch_abi(kCurrentLaunchAbi);
  request.mutable_request()->set_max_m(max_m);
  request.set_metadata_only(true);
  return request;
}

std::set<std::string> DistinctArtifacts(const v1::KernelSet& set) {
  std::set<std::string> keys;
  for (const auto* kernels : {&set.kernels(), &set.prepare()}) {
    for (const v1::Kernel& kernel : *kernels)
      keys.insert(kernel.artifact_key());
  }
  return keys;
}

// Ranges start at 1, are contiguous, and each starts at or below max_m.
void ExpectRangesUpTo(const v1::KernelSet& set, uint32_t max_m) {
  ASSERT_GT(set.kernels_size(), 0);
  EXPECT_EQ(set.kernels(0).m_min(), 1);
  for (int i = 0; i < set.kernels_size(); ++i) {
    const v1::Kernel& kernel = set.kernels(i);
    if (i > 0) {
      EXPECT_EQ(kernel.m_min(), set.kernels(i - 1).m_max() + 1);
    }
    EXPECT_LE(kernel.m_min(), max_m) << kernel.config();
  }
  EXPECT_GE(set.kernels(set.kernels_size() - 1).m_max(), max_m);
  ASSERT_EQ(set.prepare_size(), 1);
  EXPECT_EQ(set.prepare(0).role(), "repack");
}

TEST_F(MaxMTest, GetKernelsCompilesOnlyTheRangesUpToMaxM) {
  std::set<std::string> decode_artifacts;
  std::string plan_key;
  {
    auto daemon = StartDaemon({"--compile-threads", "2"});
    ASSERT_NE(daemon, nullptr);
    auto stub = daemon->Stub();

    v1::GetKernelsResponse decode;
    grpc::Status status = Get(*stub, GemmRequest(8), &decode);
    ASSERT_TRUE(status.ok()) << status.error_message();
    const v1::KernelSet& decode_set = decode.kernel_set();
    EXPECT_EQ(decode_set.max_m(), 8u);
    ExpectRangesUpTo(decode_set, 8);
    for (const auto* kernels : {&decode_set.kernels(), &decode_set.prepare()}) {
      for (const v1::Kernel& kernel : *kernels) {
        EXPECT_EQ(kernel.outcome(), v1::CACHE_OUTCOME_COMPILED);
      }
    }
    decode_artifacts = DistinctArtifacts(decode_set);
    plan_key = decode_set.plan_key();
    EXPECT_EQ(Counter(*stub, "compiles"),
              static_cast<int64_t>(decode_artifacts.size()));

    // The request without max_m: the same plan (read from the record the
    // max_m request stored), its first ranges the same kernels, and only the
    // artifacts the decode set did not have compile now.
    v1::GetKernelsResponse full;
    status = Get(*stub, GemmRequest(0), &full);
    ASSERT_TRUE(status.ok()) << status.error_message();
    const v1::KernelSet& full_set = full.kernel_set();
    EXPECT_EQ(full_set.max_m(), 0u);
    EXPECT_EQ(full_set.plan_key(), plan_key);
    EXPECT_TRUE(full_set.plan_cached());
    ASSERT_GT(full_set.kernels_size(), decode_set.kernels_size());
    for (int i = 0; i < decode_set.kernels_size(); ++i) {
      EXPECT_EQ(full_set.kernels(i).m_min(), decode_set.kernels(i).m_min());
      EXPECT_EQ(full_set.kernels(i).m_max(), decode_set.kernels(i).m_max());
      EXPECT_EQ(full_set.kernels(i).artifact_key(),
                decode_set.kernels(i).artifact_key());
    }
    EXPECT_GT(full_set.kernels(decode_set.kernels_size()).m_min(), 8);
    const std::set<std::string> all_artifacts = DistinctArtifacts(full_set);
    ASSERT_GT(all_artifacts.size(), decode_artifacts.size());
    for (const auto* kernels : {&full_set.kernels(), &full_set.prepare()}) {
      for (const v1::Kernel& kernel : *kernels) {
        EXPECT_EQ(kernel.outcome(),
                  decode_artifacts.count(kernel.artifact_key())
                      ? v1::CACHE_OUTCOME_HIT
                      : v1::CACHE_OUTCOME_COMPILED)
            << kernel.m_min() << ".." << kernel.m_max();
      }
    }
    EXPECT_EQ(Counter(*stub, "compiles"),
              static_cast<int64_t>(all_artifacts.size()));

    // The memo of serialized responses keeps the two apart: the max_m
    // request, asked again after the full one, is answered from the memo
    // with its own set.
    const int64_t memo_hits = Counter(*stub, "memo_hits");
    v1::GetKernelsResponse again;
    ASSERT_TRUE(Get(*stub, GemmRequest(8), &again).ok());
    EXPECT_EQ(Counter(*stub, "memo_hits"), memo_hits + 1);
    EXPECT_EQ(again.kernel_set().max_m(), 8u);
    EXPECT_EQ(again.kernel_set().kernels_size(), decode_set.kernels_size());
    EXPECT_EQ(DistinctArtifacts(again.kernel_set()), decode_artifacts);

    auto exit_code = daemon->Stop();
    ASSERT_TRUE(exit_code.ok()) << exit_code.status();
    EXPECT_EQ(*exit_code, 0);
  }

  // After a restart the max_m request is served from disk: no compile.
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  v1::GetKernelsResponse restarted;
  grpc::Status status = Get(*stub, GemmRequest(8), &restarted);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const v1::KernelSet& set = restarted.kernel_set();
  ExpectRangesUpTo(set, 8);
  EXPECT_EQ(set.plan_key(), plan_key);
  EXPECT_TRUE(set.plan_cached());
  EXPECT_EQ(DistinctArtifacts(set), decode_artifacts);
  for (const auto* kernels : {&set.kernels(), &set.prepare()}) {
    for (const v1::Kernel& kernel : *kernels) {
      EXPECT_EQ(kernel.outcome(), v1::CACHE_OUTCOME_HIT);
    }
  }
  EXPECT_EQ(Counter(*stub, "compiles"), 0);
}

TEST_F(MaxMTest, PrefetchWarmsOnlyTheRangesUpToMaxM) {
  auto daemon = StartDaemon({"--compile-threads", "2"});
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  const std::string manifest = dir_.path() + "/decode.yaml";
  {
    std::ofstream file(manifest);
    file << "arch: sm_90a\nfamily: gemm\nspec: " << kW4Spec
         << "\nlayers:\n  - {name: o_proj, n: 4096, k: 4096, max_m: 8}\n";
  }
  CommandResult prefetched = Ctl({"prefetch", manifest});
  ASSERT_EQ(prefetched.exit_code, 0) << prefetched.output;
  const int64_t compiled = Counter(*stub, "compiles");

  v1::GetKernelsResponse decode;
  grpc::Status status = Get(*stub, GemmRequest(8), &decode);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const std::set<std::string> decode_artifacts =
      DistinctArtifacts(decode.kernel_set());
  ExpectRangesUpTo(decode.kernel_set(), 8);
  EXPECT_EQ(compiled, static_cast<int64_t>(decode_artifacts.size()));
  EXPECT_NE(prefetched.output.find(absl::StrCat(
                "prefetch: 1 layers, ", decode_artifacts.size(), " kernels: ",
                decode_artifacts.size(), " compiled, 0 cached, 0 failed")),
            std::string::npos)
      << prefetched.output;
  for (const auto* kernels :
       {&decode.kernel_set().kernels(), &decode.kernel_set().prepare()}) {
    for (const v1::Kernel& kernel : *kernels) {
      EXPECT_EQ(kernel.outcome(), v1::CACHE_OUTCOME_HIT);
    }
  }
  EXPECT_EQ(Counter(*stub, "compiles"), compiled);

  // --max-m replaces the manifest's: 0 asks for every range. Prefetch
  // compiles what the max_m 8 prefetch left out, and nothing else.
  CommandResult everything = Ctl({"prefetch", manifest, "--max-m", "0"});
  ASSERT_EQ(everything.exit_code, 0) << everything.output;
  v1::GetKernelsResponse full;
  status = Get(*stub, GemmRequest(0), &full);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const std::set<std::string> all_artifacts =
      DistinctArtifacts(full.kernel_set());
  ASSERT_GT(all_artifacts.size(), decode_artifacts.size());
  EXPECT_NE(everything.output.find(absl::StrCat(
                "prefetch: 1 layers, ", all_artifacts.size(),
                " kernels: ", all_artifacts.size() - decode_artifacts.size(),
                " compiled, ", decode_artifacts.size(), " cached, 0 failed")),
            std::string::npos)
      << everything.output;
  EXPECT_EQ(Counter(*stub, "compiles"),
            static_cast<int64_t>(all_artifacts.size()));

  // hummingctl get --max-m says which cut it shows.
  CommandResult got =
      Ctl({"get", "--kind", "gemm", "--spec", kW4Spec, "--n", "4096", "--k",
           "4096", "--arch", "sm_90a", "--max-m", "8", "--metadata-only"});
  ASSERT_EQ(got.exit_code, 0) << got.output;
  EXPECT_NE(got.output.find("max_m: 8 (the ranges serving M <= 8)"),
            std::string::npos)
      << got.output;
  EXPECT_EQ(got.output.find(" miss"), std::string::npos) << got.output;
  CommandResult negative =
      Ctl({"get", "--kind", "gemm", "--spec", kW4Spec, "--n", "4096", "--k",
           "4096", "--arch", "sm_90a", "--max-m", "-1"});
  EXPECT_EQ(negative.exit_code, 2) << negative.output;
  EXPECT_NE(negative.output.find("--max-m"), std::string::npos)
      << negative.output;
  // A dequant set is never cut (its one kernel serves every M): the set
  // echoes 0 and get says why.
  CommandResult dequant =
      Ctl({"get", "--kind", "dequant", "--spec", kW4Spec, "--n", "4096", "--k",
           "4096", "--arch", "sm_90a", "--max-m", "8", "--metadata-only"});
  ASSERT_EQ(dequant.exit_code, 0) << dequant.output;
  EXPECT_NE(
      dequant.output.find("max_m: 0 (every range: a dequant set serves every "
                          "M)"),
      std::string::npos)
      << dequant.output;
}

}  // namespace
}  // namespace hummingd::testing
