// Every kernel the GEMM planner emits (each distinct tile config plus the
// repack kernel) for a grid of specs and for the layers of
// deploy/examples/llama-3-8b-w4a16.yaml compiles with NVRTC for every CI
// arch; each cubin targets its arch and exports its entry. Compiles run on
// a pool of hardware_concurrency threads.

#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/cubin_info.h"
#include "kernels/gemm_config.h"
#include "kernels/gemm_decode_plan.h"
#include "kernels/gpu_target.h"
#include "kernels/launch_abi.h"
#include "kernels/layer_shape.h"
#include "kernels/nvrtc_compiler.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"
#include "tests/unit/kernels/compile_grid.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

struct GridSpec {
  const char* text;
  int64_t n;
  int64_t k;
};

constexpr GridSpec kGrid[] = {
    {"weight=uint4,group=128,scale=fp16", 256, 512},
    {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16", 256, 512},
    {"weight=uint8,group=channel,scale=fp16", 128, 256},
    {"weight=uint3,group=64,scale=fp16,out=bf16", 128, 256},
    {"weight=uint2,group=32,scale=fp32", 64, 256},
    {"weight=uint1,group=16,scale=fp16", 64, 128},
    {"weight=int4,group=128,scale=fp16", 256, 256},
    {"weight=e4m3,group=channel,scale=fp32,act=bf16,out=bf16", 128, 256},
    {"weight=e2m1,group=32,scale=ue8m0,act=bf16,out=bf16", 128, 256},
    {"weight=e2m1,group=16,scale=e4m3,scale2=tensor", 128, 256},
    {"weight=e4m3,group=128x128,scale=fp32", 256, 256},
    {"weight=uint4,group=128,scale=fp16,zero=float", 128, 256},
    {"weight=uint4,group=64,scale=fp16,bias=1,scale2=channel", 128, 256},
    // deploy/examples/llama-3-8b-w4a16.yaml
    {"weight=uint4,group=128,scale=fp16", 6144, 4096},
    {"weight=uint4,group=128,scale=fp16", 4096, 4096},
    {"weight=uint4,group=128,scale=fp16", 28672, 4096},
    {"weight=uint4,group=128,scale=fp16", 4096, 14336},
    {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16", 6144,
     4096},
    {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16", 4096,
     14336},
    // Decode tiles whose weights are narrower or wider than the measured
    // 4- and 8-bit ones: their register and shared-memory footprints move
    // the blocks that fit per SM (the residency check below).
    {"weight=uint3,group=128,scale=fp16", 4096, 4096},
    {"weight=uint6,group=128,scale=fp16", 4096, 4096},
    {"weight=uint8,group=128,scale=fp16", 4096, 4096},
};

// Plain sm_90 (no wgmma: the mma.sync plans with Hopper's shared memory)
// beside sm_90a.
const char* const kArchs[] = {"sm_75", "sm_80", "sm_86",
                              "sm_89", "sm_90", "sm_90a"};

using Job = testing::CompileJob;

absl::Status CheckCompiled(const Job& job, const KernelSource& source,
                           const CompiledKernel& kernel) {
  absl::StatusOr<CubinInfo> info = InspectCubin(kernel.cubin);
  if (!info.ok()) return info.status();
  if (info->sm != job.request.gpu.sm ||
      info->arch_specific != job.request.gpu.arch_specific) {
    return absl::InternalError("cubin targets " + info->ArchName());
  }
  if (std::find(info->kernels.begin(), info->kernels.end(), source.entry) ==
      info->kernels.end()) {
    return absl::InternalError("cubin lacks " + source.entry);
  }
  if (!CubinRunsOn(*info, job.request.gpu)) {
    return absl::InternalError("cubin does not run on its own arch");
  }
  // Every fitting budget of the planner leaves the kernels' static shared
  // memory out (kGemmStaticSharedBytes): a kernel with more would run fewer
  // blocks per SM than planned, or fail to launch at the opt-in limit.
  absl::StatusOr<int> static_bytes =
      KernelStaticSharedBytes(*info, source.entry);
  if (!static_bytes.ok()) return static_bytes.status();
  if (*static_bytes > kGemmStaticSharedBytes) {
    return absl::InternalError(absl::StrCat(
        job.config.text, " has ", *static_bytes,
        " bytes of static shared memory, more than the planner's budgets "
        "leave (kGemmStaticSharedBytes = ",
        kGemmStaticSharedBytes, ")"));
  }
  // A Hopper decode kernel runs exactly the plan's blocks per SM (the
  // split-K choice assumes it): its registers must allow that many (the
  // stub's launch bounds did their job), and its launch must not fit more
  // (the planner's shared-memory request does that; without it, uint3 and
  // uint6 tiles of this grid fit a third block: bench/decode-notes.md v40).
  if (job.config.skeleton == kGemmWgmmaSkeleton) {
    // No Hopper decode kernel spills: a stack frame means registers went to
    // local memory, which the decode loops cannot afford. (Some sm_80-89
    // mma.sync 64x64x64 tiles of this grid have 8-32-byte frames:
    // kernels/README.)
    const auto frame = info->frame_bytes.find(source.entry);
    if (frame == info->frame_bytes.end()) {
      return absl::InternalError("cubin records no frame size for " +
                                 source.entry);
    }
    if (frame->second != 0) {
      return absl::InternalError(absl::StrCat(
          job.config.text, " spills: a ", frame->second, "-byte stack frame"));
    }
    const auto registers = info->registers.find(source.entry);
    if (registers == info->registers.end()) {
      return absl::InternalError("cubin records no register count for " +
                                 source.entry);
    }
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(job.config.text);
    if (!tile.ok()) return tile.status();
    const int planned = WgmmaBlocksPerSm(*tile);
    if (Sm90ResidentBlocks(tile->Threads(), registers->second, 0) < planned) {
      return absl::InternalError(absl::StrCat(
          job.config.text, " needs ", registers->second,
          " registers, more than ", planned, " blocks per SM allow"));
    }
    const int resident =
        Sm90ResidentBlocks(tile->Threads(), registers->second,
                           job.config.dynamic_shared_memory, *static_bytes);
    if (resident > planned) {
      return absl::InternalError(absl::StrCat(
          job.config.text, " fits ", resident, " blocks per SM (",
          registers->second, " registers, ", job.config.dynamic_shared_memory,
          " bytes of shared memory), planned for ", planned));
    }
  }
  return absl::OkStatus();
}

TEST(GemmCompileTest, EveryPlannedGemmKernelCompilesForEveryArch) {
  std::vector<Job> jobs;
  int refused_bf16_on_turing = 0;
  for (const char* arch : kArchs) {
    const absl::StatusOr<GpuTarget> gpu = ParseGpuArch(arch);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    for (const GridSpec& grid : kGrid) {
      absl::StatusOr<QuantSpec> spec = ParseSpecText(grid.text);
      ASSERT_TRUE(spec.ok()) << grid.text << ": " << spec.status();
      KernelRequest request;
      request.family = KernelFamily::kGemm;
      request.spec = Canonicalize(*spec);
      request.shape.n = grid.n;
      request.shape.k = grid.k;
      request.gpu = *gpu;
      // Every kernel current clients can be planned, k-major tiles too.
      request.launch_abi = kCurrentLaunchAbi;
      ASSERT_TRUE(ValidateSpec(request.spec).ok()) << grid.text;
      ASSERT_TRUE(ValidateShape(request.spec, request.shape,
                                KernelFamily::kGemm, ShapeLimits{})
                      .ok())
          << grid.text;
      absl::StatusOr<Plan> plan = PlanKernels(request);
      if (gpu->sm == 75 && request.spec.activation_type == DataType::kBf16) {
        EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
        ++refused_bf16_on_turing;
        continue;
      }
      ASSERT_TRUE(plan.ok()) << grid.text << ": " << plan.status();
      std::vector<KernelConfig> configs;
      for (const PlanEntry& entry : plan->entries) {
        if (std::find(configs.begin(), configs.end(), entry.config) ==
            configs.end()) {
          configs.push_back(entry.config);
        }
      }
      // And what clients of the original launch ABI get instead of k-major
      // tiles (the same tiles with row windows).
      KernelRequest original = request;
      original.launch_abi = kLaunchAbiOriginal;
      absl::StatusOr<Plan> original_plan = PlanKernels(original);
      ASSERT_TRUE(original_plan.ok()) << original_plan.status();
      for (const PlanEntry& entry : original_plan->entries) {
        if (std::find(configs.begin(), configs.end(), entry.config) ==
            configs.end()) {
          configs.push_back(entry.config);
        }
      }
      absl::StatusOr<PlanEntry> repack = PlanRepack(request);
      ASSERT_TRUE(repack.ok()) << repack.status();
      configs.push_back(repack->config);
      for (const KernelConfig& config : configs) {
        Job job;
        job.request = request;
        job.config = config;
        job.label = std::string(arch) + " " + grid.text +
                    " N=" + std::to_string(grid.n) +
                    " K=" + std::to_string(grid.k) + " " + config.text;
        jobs.push_back(std::move(job));
      }
    }
  }
  EXPECT_GT(refused_bf16_on_turing, 0);

  unsigned threads = 0;
  const std::vector<testing::CompileResult> results =
      testing::CompileAll(jobs, CheckCompiled, &threads);
  testing::ExpectCompiledWithinBudget(
      jobs, results, threads, "gemm", std::size(kArchs),
      [](const testing::CompileJob& job) {
        return job.config.skeleton == kGemmSkeleton;
      });
}

// Every kernel the issue-5 table of record measures (its six layers and four
// decode specs, planned for an H200 at every M) compiles for sm_90a without
// a stack frame and at its planned residency: the grid above plans other
// shapes and SM counts, and a slot-unrolled loop once spilled an e4m3
// 16-token tile of 6144 x 4096 that only this plan holds
// (bench/decode-notes.md v70).
TEST(GemmCompileTest, EveryTableOfRecordKernelCompilesUnspilledForH200) {
  std::vector<Job> jobs;
  for (const char* spec : testing::kIssue5TableSpecs) {
    for (const auto& [n, k] : testing::kIssue5Layers) {
      const KernelRequest request = testing::H200GemmRequest(spec, n, k);
      absl::StatusOr<Plan> plan = PlanKernels(request);
      ASSERT_TRUE(plan.ok()) << spec << ": " << plan.status();
      std::vector<KernelConfig> configs;
      for (const PlanEntry& entry : plan->entries) {
        if (std::find(configs.begin(), configs.end(), entry.config) ==
            configs.end()) {
          configs.push_back(entry.config);
        }
      }
      for (const KernelConfig& config : configs) {
        Job job;
        job.request = request;
        job.config = config;
        job.label = absl::StrCat(spec, " ", n, "x", k, " ", config.text);
        jobs.push_back(std::move(job));
      }
    }
  }
  // Each layer plans 6-12 distinct kernels.
  EXPECT_GE(jobs.size(), 24u * 6u);
  unsigned threads = 0;
  const std::vector<testing::CompileResult> results =
      testing::CompileAll(jobs, CheckCompiled, &threads);
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_TRUE(results[i].status.ok())
        << jobs[i].label << ": " << results[i].status;
  }
}

// The wgmma tile options (copy=bulk, layout=kmajor and blocks=N, which the
// bench can time; scales=pre, planned for 8-bit weights at 64 tokens;
// ksplit=S, k-split warps at 8 and 16 tokens) compile, and each of the first
// four reaches the kernel: its cubin differs from the plain tile's; k-split
// warp tiles compile without a stack frame. k-major scales need one scale per
// row and no zero points: with zero points the stub does not compile, and says
// why.
TEST(GemmCompileTest, WgmmaTileOptionsCompileAndChangeTheKernel) {
  absl::StatusOr<QuantSpec> spec =
      ParseSpecText("weight=uint4,group=128,scale=fp16");
  ASSERT_TRUE(spec.ok()) << spec.status();
  KernelRequest request;
  request.family = KernelFamily::kGemm;
  request.spec = Canonicalize(*spec);
  request.shape.n = 1024;
  request.shape.k = 1024;
  absl::StatusOr<GpuTarget> gpu = ParseGpuArch("sm_90a");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  request.gpu = *gpu;
  auto compile = [&](const std::string& text) -> std::string {
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(text);
    EXPECT_TRUE(tile.ok()) << text << ": " << tile.status();
    if (!tile.ok()) return "";
    EXPECT_TRUE(ValidateGemmTile(*tile, request.shape.n, request.shape.k).ok())
        << text;
    PlanEntry entry =
        MakeGemmPlanEntry(1, 64, *tile, request.spec, request.shape, 1,
                          GemmSharedMemoryLimit(request.gpu));
    absl::StatusOr<KernelSource> source = GenerateStub(request, entry.config);
    EXPECT_TRUE(source.ok()) << text << ": " << source.status();
    if (!source.ok()) return "";
    absl::StatusOr<CompiledKernel> kernel = CompileKernel(*source, request.gpu);
    EXPECT_TRUE(kernel.ok()) << text << ": " << kernel.status();
    return kernel.ok() ? kernel->cubin : "";
  };
  const std::string plain =
      compile("tile=64x128x128,warps=1x8,stages=4,mma=wgmma");
  const std::string prescaled =
      compile("tile=64x128x128,warps=1x8,stages=4,mma=wgmma,scales=pre");
  const std::string bulk_prescaled = compile(
      "tile=64x128x128,warps=1x8,stages=4,mma=wgmma,copy=bulk,scales=pre");
  const std::string k_major =
      compile("tile=64x128x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
  const std::string one_per_sm =
      compile("tile=64x128x128,warps=1x8,stages=4,mma=wgmma,blocks=1");
  // order=grouped (the stub reorders the blocks; an earlier form that did so
  // in every 64-token stub spilled, bench/decode-notes.md v66).
  const std::string grouped =
      compile("tile=64x128x128,warps=1x8,stages=4,mma=wgmma,order=grouped");
  for (const char* text :
       {"tile=64x128x128,warps=1x8,stages=4,mma=wgmma,order=grouped",
        "tile=64x256x128,warps=1x16,stages=3,mma=wgmma,order=grouped",
        // 128 tokens: 64 accumulators per thread, one block per SM.
        "tile=128x128x128,warps=1x8,stages=4,mma=wgmma",
        "tile=128x128x64,warps=1x8,stages=4,mma=wgmma,order=grouped",
        "tile=8x32x512,warps=1x8,stages=6,mma=wgmma,ksplit=4",
        "tile=8x16x512,warps=1x8,stages=8,mma=wgmma,ksplit=8",
        "tile=16x16x512,warps=1x8,stages=5,mma=wgmma,ksplit=8",
        "tile=16x32x512,warps=1x8,stages=4,mma=wgmma,ksplit=4",
        "tile=8x64x256,warps=1x8,stages=4,mma=wgmma,layout=kmajor,ksplit=2",
        // Slot-unrolled k-loops (8 to 32 tokens at 128 registers), and one
        // at three blocks per SM that keeps its loop rolled.
        "tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4",
        "tile=32x128x256,warps=1x8,stages=3,mma=wgmma",
        "tile=16x16x512,warps=1x8,stages=3,mma=wgmma,ksplit=8,blocks=3",
        // early=N beyond what the planner sets (early=1 on leads of 2): a
        // lead of 4 with 3 early tiles, a ksplit lead of 3 with 2, and the
        // bulk weight copy, whose mbarriers take the later prologue tiles'
        // weights after the release.
        "tile=64x128x64,warps=1x8,stages=6,mma=wgmma,scales=pre,early=3",
        "tile=16x16x512,warps=1x8,stages=5,mma=wgmma,ksplit=8,early=2",
        "tile=8x128x128,warps=1x8,stages=10,mma=wgmma,copy=bulk,early=2"}) {
    SCOPED_TRACE(text);
    const std::string k_split = compile(text);
    ASSERT_FALSE(k_split.empty());
    absl::StatusOr<CubinInfo> info = InspectCubin(k_split);
    ASSERT_TRUE(info.ok()) << info.status();
    ASSERT_EQ(info->frame_bytes.size(), 1u);
    EXPECT_EQ(info->frame_bytes.begin()->second, 0);
  }
  ASSERT_FALSE(plain.empty());
  ASSERT_FALSE(prescaled.empty());
  ASSERT_FALSE(bulk_prescaled.empty());
  ASSERT_FALSE(one_per_sm.empty());
  ASSERT_FALSE(k_major.empty());
  ASSERT_FALSE(grouped.empty());
  EXPECT_NE(plain, grouped);
  EXPECT_NE(plain, k_major);
  EXPECT_NE(plain, prescaled);
  EXPECT_NE(prescaled, bulk_prescaled);
  EXPECT_NE(plain, one_per_sm);
  absl::StatusOr<QuantSpec> zero_spec =
      ParseSpecText("weight=uint4,group=128,scale=fp16,zero=int");
  ASSERT_TRUE(zero_spec.ok()) << zero_spec.status();
  request.spec = Canonicalize(*zero_spec);
  absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(
      "tile=64x128x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
  ASSERT_TRUE(tile.ok()) << tile.status();
  PlanEntry entry = MakeGemmPlanEntry(1, 64, *tile, request.spec, request.shape,
                                      1, GemmSharedMemoryLimit(request.gpu));
  absl::StatusOr<KernelSource> source = GenerateStub(request, entry.config);
  ASSERT_TRUE(source.ok()) << source.status();
  absl::StatusOr<CompiledKernel> refused = CompileKernel(*source, request.gpu);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("k-major scales"),
            std::string::npos)
      << refused.status().message().substr(0, 400);
}

// The stub names a wgmma tile's blocks per SM (WgmmaTile's tenth argument,
// every argument before it spelled out) where they are not two, and the
// launch bounds carry them in every case: the skeleton reads its register
// cap from the first (gemm/wgmma_config.cuh, kTilesPerPass).
TEST(GemmCompileTest, WgmmaStubNamesItsBlocksPerSmWhereNotTwo) {
  const KernelRequest request =
      testing::GemmRequest("weight=uint4,group=128,scale=fp16", 1024, 1024);
  struct Case {
    const char* tile;
    const char* tile_arguments;  // after the bulk-weights flag
    int blocks_per_sm;
  };
  const Case cases[] = {
      {"tile=64x128x128,warps=1x8,stages=4,mma=wgmma", ">;", 2},
      {"tile=128x128x128,warps=1x8,stages=4,mma=wgmma",
       ", false, false, 1, 1>;", 1},
      {"tile=8x128x128,warps=1x8,stages=4,mma=wgmma", ", false, false, 1, 4>;",
       4},
      {"tile=16x128x128,warps=1x8,stages=4,mma=wgmma,blocks=3",
       ", false, false, 1, 3>;", 3},
      {"tile=8x32x1024,warps=1x8,stages=3,mma=wgmma,ksplit=4",
       ", false, false, 4>;", 2},
      {"tile=64x128x128,warps=1x8,stages=4,mma=wgmma,scales=pre,blocks=1",
       ", true, false, 1, 1>;", 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.tile);
    absl::StatusOr<GemmTileConfig> tile = ParseGemmTileText(c.tile);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_EQ(WgmmaBlocksPerSm(*tile), c.blocks_per_sm);
    PlanEntry entry =
        MakeGemmPlanEntry(1, 64, *tile, request.spec, request.shape, 1,
                          GemmSharedMemoryLimit(request.gpu));
    absl::StatusOr<KernelSource> stub = GenerateStub(request, entry.config);
    ASSERT_TRUE(stub.ok()) << stub.status();
    EXPECT_NE(stub->source.find(absl::StrCat(", false", c.tile_arguments)),
              std::string::npos)
        << stub->source;
    EXPECT_NE(
        stub->source.find(absl::StrCat("__launch_bounds__(", tile->Threads(),
                                       ", ", c.blocks_per_sm, ")")),
        std::string::npos)
        << stub->source;
  }
}

// The planner sets layout=kmajor only where WgmmaTakesKMajorScales says the
// kernel compiles, so the host rule must agree with the kernel's
// static_assert: each spec's planned 8-token tile with the option forced on
// compiles exactly when the rule says so (else it fails with the kernel's
// message), and the plan follows the rule on its 256-row tiles.
TEST(GemmCompileTest, KMajorScalesCompileExactlyWhereTheHostRuleSays) {
  const char* const kSpecs[] = {
      "weight=uint4,group=128,scale=fp16",
      "weight=uint4,group=32,scale=bf16,act=bf16,out=bf16",
      "weight=uint4,group=256,scale=fp32",
      "weight=e2m1,group=16,scale=e4m3,scale2=tensor",
      "weight=uint8,group=channel,scale=fp16",
      "weight=uint4,group=128,scale=fp16,zero=int",
      "weight=uint4,group=channel,scale=fp16,zero=float",
      "weight=e4m3,group=128x128,scale=fp32",
      "weight=uint4,group=tensor,scale=fp16"};
  absl::StatusOr<GpuTarget> gpu = ParseGpuArch("sm_90a");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  std::vector<Job> jobs;
  std::vector<bool> takes;
  for (const char* text : kSpecs) {
    absl::StatusOr<QuantSpec> spec = ParseSpecText(text);
    ASSERT_TRUE(spec.ok()) << text << ": " << spec.status();
    Job job;
    job.request.family = KernelFamily::kGemm;
    job.request.spec = Canonicalize(*spec);
    job.request.shape.n = 28672;
    job.request.shape.k = 4096;
    job.request.gpu = *gpu;
    job.request.launch_abi = kCurrentLaunchAbi;
    absl::StatusOr<Plan> plan = PlanKernels(job.request);
    ASSERT_TRUE(plan.ok()) << text << ": " << plan.status();
    absl::StatusOr<GemmTileConfig> tile =
        ParseGemmTileText(plan->entries[0].config.text);
    ASSERT_TRUE(tile.ok()) << tile.status();
    GemmTileConfig k_major = *tile;
    k_major.k_major_scales = true;
    const bool rule =
        WgmmaTakesKMajorScales(k_major, job.request.spec, job.request.shape.k);
    EXPECT_EQ(tile->k_major_scales, tile->block_n == 256 && rule)
        << text << ": " << plan->entries[0].config.text;
    job.config =
        MakeGemmPlanEntry(1, 8, k_major, job.request.spec, job.request.shape, 1,
                          GemmSharedMemoryLimit(job.request.gpu))
            .config;
    job.label = std::string(text) + " " + job.config.text;
    jobs.push_back(std::move(job));
    takes.push_back(rule);
  }
  EXPECT_EQ(std::count(takes.begin(), takes.end(), true), 5);
  unsigned threads = 0;
  const std::vector<testing::CompileResult> results = testing::CompileAll(
      jobs,
      [](const Job&, const KernelSource&, const CompiledKernel&) {
        return absl::OkStatus();
      },
      &threads);
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(results[i].status.ok(), takes[i])
        << jobs[i].label << ": " << results[i].status.ToString().substr(0, 400);
    if (!takes[i]) {
      EXPECT_NE(results[i].status.message().find("k-major scales"),
                std::string::npos)
          << jobs[i].label;
    }
  }
}

}  // namespace
}  // namespace hummingd
