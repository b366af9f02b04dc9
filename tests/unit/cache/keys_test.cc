#include "cache/keys.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace hummingd {
namespace {

PlanKeyInputs BasePlanInputs() {
  PlanKeyInputs inputs;
  inputs.family = KernelFamily::kGemm;
  inputs.canonical_spec =
      "weight=uint4,group=128,scale=fp16,zero=none,scale2=none,act=fp16,"
      "act_scale=none,out=fp16,bias=0";
  inputs.shape.n = 4096;
  inputs.shape.k = 8192;
  inputs.shape.kind = GemmKind::kMoeIndexed;
  inputs.shape.experts = 64;
  inputs.shape.top_k = 8;
  inputs.planner_gpu_fields = "arch=sm_90a,sms=132";
  inputs.planner_version = 3;
  inputs.launch_abi = 1;
  return inputs;
}

ArtifactKeyInputs BaseArtifactInputs() {
  ArtifactKeyInputs inputs;
  inputs.codegen_hash = std::string(64, 'c');
  inputs.toolchain = "nvrtc-13.0";
  inputs.arch = "sm_90a";
  inputs.compile_options = {"--gpu-architecture=sm_90a", "--std=c++17",
                            "-default-device"};
  inputs.canonical_spec =
      "weight=uint4,group=128,scale=fp16,zero=none,scale2=none,act=fp16,"
      "act_scale=none,out=fp16,bias=0";
  inputs.shape.n = 4096;
  inputs.shape.k = 8192;
  inputs.shape.kind = GemmKind::kDense;
  inputs.skeleton = "gemm";
  inputs.config_text = "block_m=64,block_n=128,block_k=64,stages=4";
  return inputs;
}

bool IsLowerHex64(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

TEST(PlanKeyTest, SameInputsGiveSameKey) {
  EXPECT_EQ(PlanKey(BasePlanInputs()), PlanKey(BasePlanInputs()));
  EXPECT_TRUE(IsLowerHex64(PlanKey(BasePlanInputs())));
}

// A silent change of the key schema (field names, order, encoding) must fail
// here: it would orphan every cache on every node. If the change is
// intended, bump kCacheSchemaVersion and update the golden value. (Both
// values were checked against an independent Python computation of the
// schema documented in cache/README.md; last at cache schema 4, when plan
// keys gained the launch ABI.)
TEST(PlanKeyTest, GoldenValue) {
  EXPECT_EQ(PlanKey(BasePlanInputs()),
            "a9a28b27b258f5a734f21458a0dcdc317102801ab599b3b30e330db801fcd376");
}

TEST(ArtifactKeyTest, GoldenValue) {
  EXPECT_EQ(ArtifactKey(BaseArtifactInputs()),
            "c0222cb1b332d035670910b25f553cf3f5418c36f926ae697d8bf52fea8533a1");
}

TEST(PlanKeyTest, EveryFieldChangesTheKey) {
  const std::vector<std::pair<std::string, std::function<void(PlanKeyInputs&)>>>
      mutations = {
          {"family",
           [](PlanKeyInputs& in) { in.family = KernelFamily::kDequant; }},
          {"canonical_spec",
           [](PlanKeyInputs& in) { in.canonical_spec.back() = '1'; }},
          {"shape.n", [](PlanKeyInputs& in) { in.shape.n += 64; }},
          {"shape.k", [](PlanKeyInputs& in) { in.shape.k += 128; }},
          {"shape.kind",
           [](PlanKeyInputs& in) { in.shape.kind = GemmKind::kMoeGrouped; }},
          {"shape.experts", [](PlanKeyInputs& in) { in.shape.experts = 128; }},
          {"shape.top_k", [](PlanKeyInputs& in) { in.shape.top_k = 2; }},
          {"planner_gpu_fields",
           [](PlanKeyInputs& in) {
             in.planner_gpu_fields = "arch=sm_90a,sms=114";
           }},
          {"planner_version",
           [](PlanKeyInputs& in) { in.planner_version = 4; }},
          {"launch_abi", [](PlanKeyInputs& in) { in.launch_abi = 0; }},
      };
  absl::flat_hash_set<std::string> seen = {PlanKey(BasePlanInputs())};
  for (const auto& [field, mutate] : mutations) {
    PlanKeyInputs inputs = BasePlanInputs();
    mutate(inputs);
    EXPECT_TRUE(seen.insert(PlanKey(inputs)).second)
        << "changing " << field << " did not change the plan key";
  }
}

TEST(ArtifactKeyTest, SameInputsGiveSameKey) {
  EXPECT_EQ(ArtifactKey(BaseArtifactInputs()),
            ArtifactKey(BaseArtifactInputs()));
  EXPECT_TRUE(IsLowerHex64(ArtifactKey(BaseArtifactInputs())));
}

TEST(ArtifactKeyTest, EveryFieldChangesTheKey) {
  using Mutation = std::function<void(ArtifactKeyInputs&)>;
  const std::vector<std::pair<std::string, Mutation>> mutations = {
      {"codegen_hash",
       [](ArtifactKeyInputs& in) { in.codegen_hash[17] = 'd'; }},
      {"toolchain", [](ArtifactKeyInputs& in) { in.toolchain = "nvrtc-13.1"; }},
      {"arch", [](ArtifactKeyInputs& in) { in.arch = "sm_90"; }},
      {"compile_options[0]",
       [](ArtifactKeyInputs& in) {
         in.compile_options[0] = "--gpu-architecture=sm_90";
       }},
      {"compile_options[1]",
       [](ArtifactKeyInputs& in) { in.compile_options[1] = "--std=c++20"; }},
      {"compile_options[2]",
       [](ArtifactKeyInputs& in) { in.compile_options[2] = "-lineinfo"; }},
      {"compile_options order",
       [](ArtifactKeyInputs& in) {
         std::swap(in.compile_options[0], in.compile_options[1]);
       }},
      {"compile_options appended",
       [](ArtifactKeyInputs& in) { in.compile_options.push_back("-G"); }},
      {"compile_options removed",
       [](ArtifactKeyInputs& in) { in.compile_options.pop_back(); }},
      {"compile_options empty appended",
       [](ArtifactKeyInputs& in) { in.compile_options.push_back(""); }},
      {"canonical_spec",
       [](ArtifactKeyInputs& in) { in.canonical_spec.back() = '1'; }},
      {"shape.n", [](ArtifactKeyInputs& in) { in.shape.n += 64; }},
      {"shape.k", [](ArtifactKeyInputs& in) { in.shape.k += 128; }},
      {"shape.kind",
       [](ArtifactKeyInputs& in) { in.shape.kind = GemmKind::kMoeIndexed; }},
      {"shape.experts", [](ArtifactKeyInputs& in) { in.shape.experts = 8; }},
      {"shape.top_k", [](ArtifactKeyInputs& in) { in.shape.top_k = 2; }},
      {"skeleton", [](ArtifactKeyInputs& in) { in.skeleton = "dequant"; }},
      {"config_text",
       [](ArtifactKeyInputs& in) { in.config_text.back() = '3'; }},
  };
  absl::flat_hash_set<std::string> seen = {ArtifactKey(BaseArtifactInputs())};
  for (const auto& [field, mutate] : mutations) {
    ArtifactKeyInputs inputs = BaseArtifactInputs();
    mutate(inputs);
    EXPECT_TRUE(seen.insert(ArtifactKey(inputs)).second)
        << "changing " << field << " did not change the artifact key";
  }
}

// Field boundaries are length-prefixed: moving text from one field into the
// next must not collide.
TEST(ArtifactKeyTest, FieldBoundariesDoNotCollide) {
  ArtifactKeyInputs a = BaseArtifactInputs();
  ArtifactKeyInputs b = BaseArtifactInputs();
  a.skeleton = "gemm";
  a.config_text = "x=1";
  b.skeleton = "gemmx";
  b.config_text = "=1";
  EXPECT_NE(ArtifactKey(a), ArtifactKey(b));

  ArtifactKeyInputs c = BaseArtifactInputs();
  ArtifactKeyInputs d = BaseArtifactInputs();
  c.compile_options = {"-a", "-b"};
  d.compile_options = {"-a-b"};
  EXPECT_NE(ArtifactKey(c), ArtifactKey(d));
}

TEST(KeysTest, PlanAndArtifactKeysNeverCoincide) {
  PlanKeyInputs plan;
  ArtifactKeyInputs artifact;
  EXPECT_NE(PlanKey(plan), ArtifactKey(artifact));
}

}  // namespace
}  // namespace hummingd
