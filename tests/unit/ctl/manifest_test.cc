#include "ctl/manifest.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "kernels/launch_abi.h"

namespace hummingd {
namespace {

TEST(ManifestTest, DefaultsApplyAndLayersOverride) {
  auto requests = ParseManifest(R"(
model: m
arch: sm_90a
family: dequant
spec: weight=uint4,group=128
layers:
  - {name: a, n: 6144, k: 4096}
  - {name: b, n: 1536, k: 2048, kind: moe_indexed, experts: 128, top_k: 8,
     spec: "weight=e4m3,group=channel", family: gemm, arch: sm_80}
)",
                                ManifestOptions());
  ASSERT_TRUE(requests.ok()) << requests.status();
  ASSERT_EQ(requests->size(), 2u);
  const v1::KernelRequest& a = (*requests)[0];
  EXPECT_EQ(a.name(), "a");
  EXPECT_EQ(a.shape().n(), 6144);
  EXPECT_EQ(a.shape().k(), 4096);
  EXPECT_EQ(a.spec().text(), "weight=uint4,group=128");
  EXPECT_EQ(a.gpu().arch(), "sm_90a");
  EXPECT_EQ(a.family(), v1::KERNEL_FAMILY_DEQUANT);
  EXPECT_EQ(a.shape().kind(), v1::GEMM_KIND_DENSE);
  const v1::KernelRequest& b = (*requests)[1];
  EXPECT_EQ(b.shape().kind(), v1::GEMM_KIND_MOE_INDEXED);
  EXPECT_EQ(b.shape().experts(), 128);
  EXPECT_EQ(b.shape().top_k(), 8);
  EXPECT_EQ(b.family(), v1::KERNEL_FAMILY_GEMM);
  EXPECT_EQ(b.gpu().arch(), "sm_80");
  EXPECT_EQ(b.spec().text(), "weight=e4m3,group=channel");
  // Prefetch warms what clients of this build ask for.
  EXPECT_EQ(a.launch_abi(), kCurrentLaunchAbi);
  EXPECT_EQ(b.launch_abi(), kCurrentLaunchAbi);
}

TEST(ManifestTest, JsonAndBareListsAndArchOverride) {
  ManifestOptions options;
  options.arch_override = "sm_86";
  auto requests = ParseManifest(
      R"([{"name": "x", "n": 512, "k": 256, "spec": "weight=uint8", "arch": "sm_75"}])",
      options);
  ASSERT_TRUE(requests.ok()) << requests.status();
  ASSERT_EQ(requests->size(), 1u);
  EXPECT_EQ((*requests)[0].gpu().arch(), "sm_86");
  EXPECT_EQ((*requests)[0].shape().n(), 512);

  // An older fleet's layout, as hummingctl prefetch --launch-abi passes it.
  options.launch_abi = kLaunchAbiOriginal;
  requests = ParseManifest(R"([{"n": 512, "k": 256, "spec": "weight=uint8"}])",
                           options);
  ASSERT_TRUE(requests.ok()) << requests.status();
  EXPECT_EQ((*requests)[0].launch_abi(), kLaunchAbiOriginal);
}

// max_m: absent is 0 (every range); the top level sets every layer's, a
// layer its own, and --max-m (max_m_override) replaces both, 0 included.
TEST(ManifestTest, MaxMDefaultsLayersAndOverride) {
  const std::string text = R"(
arch: sm_90a
family: gemm
spec: weight=uint4,group=128
max_m: 64
layers:
  - {name: decode, n: 4096, k: 4096}
  - {name: tiny, n: 4096, k: 4096, max_m: 8}
  - {name: all, n: 4096, k: 4096, max_m: 0}
)";
  auto requests = ParseManifest(text, ManifestOptions());
  ASSERT_TRUE(requests.ok()) << requests.status();
  ASSERT_EQ(requests->size(), 3u);
  EXPECT_EQ((*requests)[0].max_m(), 64u);
  EXPECT_EQ((*requests)[1].max_m(), 8u);
  EXPECT_EQ((*requests)[2].max_m(), 0u);

  ManifestOptions options;
  options.max_m_override = 16;
  requests = ParseManifest(text, options);
  ASSERT_TRUE(requests.ok()) << requests.status();
  for (const v1::KernelRequest& request : *requests) {
    EXPECT_EQ(request.max_m(), 16u) << request.name();
  }
  options.max_m_override = 0;
  requests = ParseManifest(text, options);
  ASSERT_TRUE(requests.ok()) << requests.status();
  for (const v1::KernelRequest& request : *requests) {
    EXPECT_EQ(request.max_m(), 0u) << request.name();
  }

  requests = ParseManifest(R"([{"n": 512, "k": 256, "spec": "weight=uint8",
                                "arch": "sm_80"}])",
                           ManifestOptions());
  ASSERT_TRUE(requests.ok()) << requests.status();
  EXPECT_EQ((*requests)[0].max_m(), 0u);
}

TEST(ManifestTest, StructuralErrorsNameTheLayerAndKey) {
  struct Case {
    const char* text;
    const char* where;
  };
  const Case cases[] = {
      {"arch: sm_90a\nspec: weight=uint4\nlayers:\n  - {n: 1}\n",
       "layers[0].k"},
      {"arch: sm_90a\nspec: weight=uint4\nlayers:\n  - {n: x, k: 1}\n",
       "layers[0].n"},
      {"arch: sm_90a\nspec: s\nlayers:\n  - {n: 1, k: 1}\n  - {n: 1, k: 1, "
       "colour: red}\n",
       "layers[1]"},
      {"spec: s\nlayers:\n  - {n: 1, k: 1}\n", "layers[0].arch"},
      {"arch: sm_90a\nlayers:\n  - {n: 1, k: 1}\n", "layers[0].spec"},
      {"arch: sm_90a\nspec: s\nlayers:\n  - {n: 1, k: 1, kind: sparse}\n",
       "layers[0].kind"},
      {"arch: sm_90a\nspec: s\nlayers: []\n", "layers"},
      {"arch: sm_90a\nspec: s\n", "layers"},
      {"arch: [unclosed\n", "manifest"},
      {"arch: sm_90a\nspec: s\nvendor: x\nlayers:\n  - {n: 1, k: 1}\n",
       "manifest"},
      {"arch: sm_90a\nspec: s\nlayers:\n  - {n: 1, k: 1, max_m: -8}\n",
       "layers[0].max_m: must be 0"},
      {"arch: sm_90a\nspec: s\nlayers:\n  - {n: 1, k: 1, max_m: lots}\n",
       "layers[0].max_m"},
      {"arch: sm_90a\nspec: s\nmax_m: 4294967296\nlayers:\n  - {n: 1, k: "
       "1}\n",
       "max_m: must be 0"},
  };
  for (const Case& c : cases) {
    auto result = ParseManifest(c.text, ManifestOptions());
    ASSERT_FALSE(result.ok()) << c.text;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find(c.where), std::string::npos)
        << "'" << result.status().message() << "' should name " << c.where;
  }
}

// A key that is a sequence or a mapping is valid YAML; it used to escape as
// YAML::TypedBadConversion, aborting hummingctl and, through the C ABI's
// hummingd_prefetch_manifest, the Python process.
TEST(ManifestTest, NonScalarKeysAreInvalidArgumentNotAThrow) {
  struct Case {
    const char* text;
    const char* where;
  };
  const Case cases[] = {
      {"? [a, b]\n: 1\nlayers: []\n", "manifest: key [a, b]"},
      {"? {x: 1}\n: 1\narch: sm_90a\nlayers:\n  - {n: 1, k: 1}\n",
       "manifest: key {x: 1}"},
      {"arch: sm_90a\nspec: s\nlayers:\n  - {? [n, k]: 1, n: 1, k: 1}\n",
       "layers[0]: key [n, k]"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<v1::KernelRequest>> result;
    EXPECT_NO_THROW(result = ParseManifest(c.text, ManifestOptions()))
        << c.text;
    ASSERT_FALSE(result.ok()) << c.text;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find(c.where), std::string::npos)
        << "'" << result.status().message() << "' should name " << c.where;
  }
}

TEST(ManifestTest, ShippedExamplesParse) {
  const std::filesystem::path examples =
      std::filesystem::path(HUMMINGD_SOURCE_DIR) / "deploy" / "examples";
  int parsed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(examples)) {
    auto requests = LoadManifestFile(entry.path().string(), ManifestOptions());
    ASSERT_TRUE(requests.ok()) << entry.path() << ": " << requests.status();
    EXPECT_FALSE(requests->empty());
    ++parsed;
  }
  EXPECT_GE(parsed, 3);
}

TEST(ManifestTest, MissingFileIsNotFound) {
  auto result = LoadManifestFile("/nonexistent/model.yaml", ManifestOptions());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace hummingd
