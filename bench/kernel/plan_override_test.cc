// The bench's --override: parsing, and replacing one M range of a GEMM
// kernel set (both entries of a range planner v40 splits) by a kernel
// compiled (NVRTC, no GPU needed) from the given tile, with the launch the
// planner would give that tile.

#include "bench/kernel/plan_override.h"

#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "kernels/cubin_info.h"
#include "kernels/gpu_target.h"
#include "kernels/quant_spec.h"

namespace hummingd::bench {
namespace {

constexpr char kTile16[] = "tile=16x256x64,warps=1x8,stages=6,mma=wgmma";

KernelRequest W4Request() {
  KernelRequest request;
  request.family = KernelFamily::kGemm;
  request.spec =
      Canonicalize(*ParseSpecText("weight=uint4,group=128,scale=fp16"));
  request.shape.n = 8192;
  request.shape.k = 8192;
  request.gpu = *ParseGpuArch("sm_90a");
  request.gpu.sm_count = 132;
  request.launch_abi = kCurrentLaunchAbi;
  return request;
}

v1::KernelSet TwoRanges() {
  v1::KernelSet set;
  for (auto [m_min, m_max] : {std::pair<int64_t, int64_t>{1, 8}, {9, 16}}) {
    v1::Kernel* kernel = set.add_kernels();
    kernel->set_m_min(m_min);
    kernel->set_m_max(m_max);
    kernel->set_entry("planned");
    kernel->set_cubin("planned cubin");
  }
  return set;
}

TEST(PlanOverrideTest, ParsesRangesTilesAndSplits) {
  absl::StatusOr<std::vector<PlanOverride>> parsed = ParsePlanOverrides(
      std::string("16:") + kTile16 + ":4;8:" + kTile16 + ":1");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].m_max, 16);
  EXPECT_EQ((*parsed)[0].splits, 4);
  EXPECT_EQ((*parsed)[0].tile.mma, GemmMma::kWgmma);
  EXPECT_EQ((*parsed)[0].tile.block_k, 64);
  EXPECT_EQ((*parsed)[1].m_max, 8);
  EXPECT_TRUE(ParsePlanOverrides("")->empty());
  for (const std::string& bad :
       {std::string("16:") + kTile16, std::string("x:") + kTile16 + ":4",
        std::string("16:") + kTile16 + ":0",
        std::string("16:") + kTile16 + ":17", std::string("16:tile=bad:4")}) {
    EXPECT_EQ(ParsePlanOverrides(bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(PlanOverrideTest, ReplacesOnlyTheNamedRangeWithACompiledKernel) {
  const KernelRequest request = W4Request();
  v1::KernelSet set = TwoRanges();
  absl::StatusOr<std::vector<PlanOverride>> overrides =
      ParsePlanOverrides(std::string("16:") + kTile16 + ":4");
  ASSERT_TRUE(overrides.ok()) << overrides.status();
  ASSERT_TRUE(ApplyPlanOverrides(request, *overrides, set).ok());

  EXPECT_EQ(set.kernels(0).entry(), "planned");  // untouched
  const v1::Kernel& kernel = set.kernels(1);
  EXPECT_EQ(kernel.m_min(), 9);
  EXPECT_EQ(kernel.config(), kTile16);
  EXPECT_EQ(kernel.entry(), "hummingd_gemm");
  EXPECT_EQ(kernel.launch().grid_y(), 8192 / 256);
  EXPECT_EQ(kernel.launch().grid_z(), 4);
  EXPECT_EQ(kernel.launch().m_per_block_x(), 16);
  EXPECT_EQ(kernel.launch().block_x(), 256);
  EXPECT_TRUE(kernel.launch().programmatic_dependent_launch());
  EXPECT_GT(kernel.launch().workspace_bytes_per_m_block(), 0);
  absl::StatusOr<CubinInfo> info = InspectCubin(kernel.cubin());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->ArchName(), "sm_90a");
}

// Two ranges of one artifact: the set carries its cubin once, in the first;
// overriding that range leaves the cubin with the other.
TEST(PlanOverrideTest, AnOverriddenRangeHandsItsSharedCubinOn) {
  v1::KernelSet set = TwoRanges();
  for (v1::Kernel& kernel : *set.mutable_kernels()) {
    kernel.set_artifact_key("shared");
  }
  set.mutable_kernels(1)->clear_cubin();
  absl::StatusOr<std::vector<PlanOverride>> overrides =
      ParsePlanOverrides(std::string("8:") + kTile16 + ":1");
  ASSERT_TRUE(overrides.ok()) << overrides.status();
  ASSERT_TRUE(ApplyPlanOverrides(W4Request(), *overrides, set).ok());
  EXPECT_EQ(set.kernels(0).config(), kTile16);
  EXPECT_NE(set.kernels(0).artifact_key(), "shared");
  EXPECT_EQ(set.kernels(1).cubin(), "planned cubin");
}

// Planner v40 plans some 8-token ranges as M = 1-5 and 6-8 of one tile, the
// upper with early=1: "8:" replaces both (so a sweep's M = 1-5 rows time the
// override too); "5:" the lower alone; a lower entry of another tile is
// not the upper's partner.
TEST(PlanOverrideTest, AnOverrideTakesBothEntriesOfASplitRange) {
  constexpr char kKSplit[] =
      "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4";
  auto split_set = [&](const std::string& lower_text) {
    v1::KernelSet set;
    const std::pair<int64_t, int64_t> ranges[] = {{1, 5}, {6, 8}, {9, 16}};
    const std::string texts[] = {lower_text, std::string(kKSplit) + ",early=1",
                                 kTile16};
    for (int i = 0; i < 3; ++i) {
      v1::Kernel* kernel = set.add_kernels();
      kernel->set_m_min(ranges[i].first);
      kernel->set_m_max(ranges[i].second);
      kernel->set_config(texts[i]);
      kernel->set_entry("planned");
      kernel->set_cubin("planned cubin " + std::to_string(i));
      kernel->mutable_launch()->set_grid_z(1);
    }
    return set;
  };
  const std::string override_text = std::string(":") + kTile16 + ":1";
  v1::KernelSet both = split_set(kKSplit);
  ASSERT_TRUE(ApplyPlanOverrides(W4Request(),
                                 *ParsePlanOverrides("8" + override_text), both)
                  .ok());
  ASSERT_EQ(both.kernels_size(), 2);
  EXPECT_EQ(both.kernels(0).m_min(), 1);
  EXPECT_EQ(both.kernels(0).m_max(), 8);
  EXPECT_EQ(both.kernels(0).config(), kTile16);
  EXPECT_EQ(both.kernels(0).entry(), "hummingd_gemm");
  EXPECT_EQ(both.kernels(1).entry(), "planned");

  v1::KernelSet lower = split_set(kKSplit);
  ASSERT_TRUE(ApplyPlanOverrides(
                  W4Request(), *ParsePlanOverrides("5" + override_text), lower)
                  .ok());
  ASSERT_EQ(lower.kernels_size(), 3);
  EXPECT_EQ(lower.kernels(0).config(), kTile16);
  EXPECT_EQ(lower.kernels(1).config(), std::string(kKSplit) + ",early=1");

  v1::KernelSet other =
      split_set("tile=8x16x1024,warps=1x8,stages=3,mma=wgmma,ksplit=8");
  ASSERT_TRUE(ApplyPlanOverrides(
                  W4Request(), *ParsePlanOverrides("8" + override_text), other)
                  .ok());
  ASSERT_EQ(other.kernels_size(), 3);
  EXPECT_EQ(other.kernels(0).entry(), "planned");
  EXPECT_EQ(other.kernels(1).m_min(), 6);
  EXPECT_EQ(other.kernels(1).config(), kTile16);

  // A text that names both ends overrides each entry on its own, in either
  // order, even when the lower one's override is its planned tile.
  for (const std::string& text :
       {"5:" + std::string(kKSplit) + ":1;8" + override_text,
        "8" + override_text + ";5:" + std::string(kKSplit) + ":1"}) {
    SCOPED_TRACE(text);
    v1::KernelSet named = split_set(kKSplit);
    ASSERT_TRUE(
        ApplyPlanOverrides(W4Request(), *ParsePlanOverrides(text), named).ok());
    ASSERT_EQ(named.kernels_size(), 3);
    EXPECT_EQ(named.kernels(0).m_max(), 5);
    EXPECT_EQ(named.kernels(0).config(), kKSplit);
    EXPECT_EQ(named.kernels(0).entry(), "hummingd_gemm");
    EXPECT_EQ(named.kernels(1).m_min(), 6);
    EXPECT_EQ(named.kernels(1).config(), kTile16);
  }

  // The lower entry's cubin, carried for a later kernel of its artifact,
  // stays in the set when the entry goes.
  v1::KernelSet shared = split_set(kKSplit);
  shared.mutable_kernels(0)->set_artifact_key("lower");
  v1::Kernel* later = shared.add_kernels();
  later->set_m_min(17);
  later->set_m_max(32);
  later->set_artifact_key("lower");
  ASSERT_TRUE(ApplyPlanOverrides(
                  W4Request(), *ParsePlanOverrides("8" + override_text), shared)
                  .ok());
  ASSERT_EQ(shared.kernels_size(), 3);
  EXPECT_EQ(shared.kernels(2).cubin(), "planned cubin 0");

  // An override that fails its checks leaves the set as it was.
  v1::KernelSet refused = split_set(kKSplit);
  const v1::KernelSet before = refused;
  EXPECT_EQ(
      ApplyPlanOverrides(
          W4Request(), *ParsePlanOverrides("8:" + std::string(kKSplit) + ":2"),
          refused)
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.SerializeAsString(), before.SerializeAsString());
}

TEST(PlanOverrideTest, RefusesUnknownRangesAndIllegalTiles) {
  const KernelRequest request = W4Request();
  v1::KernelSet set = TwoRanges();
  const absl::Status unknown = ApplyPlanOverrides(
      request, *ParsePlanOverrides(std::string("17:") + kTile16 + ":1"), set);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound) << unknown;
  // It names the ranges there are (TwoRanges: 1-8, 9-16).
  EXPECT_NE(unknown.message().find("its ranges end at 8, 16"),
            std::string::npos)
      << unknown;
  // Four 64-row blocks per warpgroup.
  EXPECT_FALSE(ApplyPlanOverrides(
                   request,
                   *ParsePlanOverrides(
                       "16:tile=16x512x64,warps=1x4,stages=6,mma=wgmma:1"),
                   set)
                   .ok());
  // k-major scales on a spec with zero points: refused before NVRTC.
  KernelRequest zero_points = request;
  zero_points.spec = Canonicalize(
      *ParseSpecText("weight=uint4,group=128,scale=fp16,zero=int"));
  const absl::Status k_major = ApplyPlanOverrides(
      zero_points,
      *ParsePlanOverrides(std::string("16:") + kTile16 + ",layout=kmajor:1"),
      set);
  EXPECT_EQ(k_major.code(), absl::StatusCode::kInvalidArgument) << k_major;
  EXPECT_NE(k_major.message().find("layout=kmajor"), std::string::npos);
  // Nor for a launcher of the original GemmArgs, on a spec that takes it.
  KernelRequest original_abi = request;
  original_abi.launch_abi = kLaunchAbiOriginal;
  const absl::Status old_layout = ApplyPlanOverrides(
      original_abi,
      *ParsePlanOverrides(std::string("16:") + kTile16 + ",layout=kmajor:1"),
      set);
  EXPECT_EQ(old_layout.code(), absl::StatusCode::kInvalidArgument)
      << old_layout;
  EXPECT_NE(old_layout.message().find("launch ABI"), std::string::npos)
      << old_layout;
  // ksplit tiles: unsplit only, from launch ABI 2, and with slices that hold
  // whole scale groups (BK 768 over 4 slices: 192 columns, one and a half
  // groups of 128).
  const std::string k_split =
      "8:tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8";
  const absl::Status split_k =
      ApplyPlanOverrides(request, *ParsePlanOverrides(k_split + ":2"), set);
  EXPECT_EQ(split_k.code(), absl::StatusCode::kInvalidArgument) << split_k;
  EXPECT_NE(split_k.message().find("unsplit"), std::string::npos) << split_k;
  KernelRequest k_major_abi = request;
  k_major_abi.launch_abi = kLaunchAbiKMajorScales;
  const absl::Status old_client =
      ApplyPlanOverrides(k_major_abi, *ParsePlanOverrides(k_split + ":1"), set);
  EXPECT_EQ(old_client.code(), absl::StatusCode::kInvalidArgument)
      << old_client;
  EXPECT_NE(old_client.message().find("launch ABI"), std::string::npos);
  // 128-token tiles and grouped order from launch ABI 3.
  KernelRequest k_split_abi = request;
  k_split_abi.launch_abi = kLaunchAbiKSplitTiles;
  for (const char* tile :
       {"16:tile=128x128x128,warps=1x8,stages=4,mma=wgmma:1",
        "16:tile=64x128x128,warps=1x8,stages=4,mma=wgmma,order=grouped:1"}) {
    const absl::Status wide =
        ApplyPlanOverrides(k_split_abi, *ParsePlanOverrides(tile), set);
    EXPECT_EQ(wide.code(), absl::StatusCode::kInvalidArgument) << wide;
    EXPECT_NE(wide.message().find("needs launch ABI 3"), std::string::npos)
        << wide;
  }
  KernelRequest k_6144 = request;
  k_6144.shape.k = 6144;
  const absl::Status straddles = ApplyPlanOverrides(
      k_6144,
      *ParsePlanOverrides(
          "8:tile=8x32x768,warps=1x8,stages=3,mma=wgmma,ksplit=4:1"),
      set);
  EXPECT_EQ(straddles.code(), absl::StatusCode::kInvalidArgument) << straddles;
  EXPECT_NE(straddles.message().find("whole scale groups"), std::string::npos);
  EXPECT_EQ(set.kernels(0).entry(), "planned");
  EXPECT_EQ(set.kernels(1).entry(), "planned");
}

TEST(PlanOverrideTest, ValidateAcceptsPlannableTilesAndNamesTheBrokenRule) {
  // What hummingd_planned_cubins --sweep checks before compiling a sweep's
  // tile: the same rules as ApplyPlanOverrides, without a kernel set.
  const KernelRequest request = W4Request();
  auto override_of = [](const char* text) {
    absl::StatusOr<std::vector<PlanOverride>> parsed = ParsePlanOverrides(text);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    return parsed->at(0);
  };
  EXPECT_TRUE(ValidatePlanOverride(
                  request, override_of("8:tile=8x32x1024,warps=1x8,stages=3,"
                                       "mma=wgmma,ksplit=4:1"))
                  .ok());
  const absl::Status split_ksplit = ValidatePlanOverride(
      request,
      override_of("8:tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4:2"));
  EXPECT_EQ(split_ksplit.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(split_ksplit.message().find("ksplit tiles run unsplit"),
            std::string::npos)
      << split_ksplit;
  // N = 8320 is no multiple of the 256-row block.
  KernelRequest other_n = request;
  other_n.shape.n = 8320;
  const std::string tile16 = std::string("16:") + kTile16 + ":4";
  EXPECT_TRUE(ValidatePlanOverride(request, override_of(tile16.c_str())).ok());
  EXPECT_EQ(ValidatePlanOverride(other_n, override_of(tile16.c_str())).code(),
            absl::StatusCode::kInvalidArgument);
  // Six 64 KB stages: past any GPU's shared memory per block, which the
  // device would only say at launch (sweep dg lost six lines so).
  const absl::Status too_big = ValidatePlanOverride(
      request,
      override_of("64:tile=64x256x256,warps=1x16,stages=6,mma=wgmma:1"));
  EXPECT_EQ(too_big.code(), absl::StatusCode::kInvalidArgument) << too_big;
  EXPECT_NE(too_big.message().find("bytes of shared memory"), std::string::npos)
      << too_big;
  // Four 32 KB stages (128-column k-tiles) fit.
  EXPECT_TRUE(ValidatePlanOverride(
                  request, override_of("64:tile=64x256x128,warps=1x16,stages=4,"
                                       "mma=wgmma:1"))
                  .ok());
}

TEST(PlanOverrideTest, WgmmaCopyKeepsTilesAndSplitsAndSkipsMmaSync) {
  v1::KernelSet set = TwoRanges();
  set.mutable_kernels(0)->set_config("tile=16x64x128,warps=1x4,stages=4");
  set.mutable_kernels(0)->mutable_launch()->set_grid_z(3);
  set.mutable_kernels(1)->set_config(kTile16);
  set.mutable_kernels(1)->mutable_launch()->set_grid_z(8);
  absl::StatusOr<std::vector<PlanOverride>> bulk =
      WgmmaCopyOverrides(set, /*bulk=*/true);
  ASSERT_TRUE(bulk.ok()) << bulk.status();
  ASSERT_EQ(bulk->size(), 1u);  // the mma.sync range stays as planned
  EXPECT_EQ((*bulk)[0].m_max, 16);
  EXPECT_EQ((*bulk)[0].splits, 8);
  EXPECT_TRUE((*bulk)[0].tile.bulk_weights);
  EXPECT_EQ(FormatGemmTileText((*bulk)[0].tile),
            std::string(kTile16) + ",copy=bulk");

  // And back: a bulk kernel's cp.async twin.
  set.mutable_kernels(1)->set_config(std::string(kTile16) + ",copy=bulk");
  absl::StatusOr<std::vector<PlanOverride>> cp_async =
      WgmmaCopyOverrides(set, /*bulk=*/false);
  ASSERT_TRUE(cp_async.ok()) << cp_async.status();
  ASSERT_EQ(cp_async->size(), 1u);
  EXPECT_EQ(FormatGemmTileText((*cp_async)[0].tile), kTile16);

  // The override compiles (the bulk path included) and replaces the range.
  const KernelRequest request = W4Request();
  ASSERT_TRUE(ApplyPlanOverrides(request, *bulk, set).ok());
  EXPECT_EQ(set.kernels(1).config(), std::string(kTile16) + ",copy=bulk");
  EXPECT_EQ(set.kernels(1).entry(), "hummingd_gemm");

  // k-split tiles copy by cp.async only: --wgmma_copy leaves them.
  set.mutable_kernels(0)->set_config(
      "tile=8x16x1024,warps=1x8,stages=4,mma=wgmma,ksplit=8");
  absl::StatusOr<std::vector<PlanOverride>> around_k_split =
      WgmmaCopyOverrides(set, /*bulk=*/true);
  ASSERT_TRUE(around_k_split.ok()) << around_k_split.status();
  ASSERT_EQ(around_k_split->size(), 1u);
  EXPECT_EQ((*around_k_split)[0].m_max, 16);

  set.mutable_kernels(1)->set_config("tile=garbage");
  EXPECT_EQ(WgmmaCopyOverrides(set, true).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hummingd::bench
