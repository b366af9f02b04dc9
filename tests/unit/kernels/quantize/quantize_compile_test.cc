// PlanQuantize and the "quantize" stub, and NVRTC compiles of the quantize
// kernel for every spec of the quantize grid on every CI arch (each cubin
// targets its arch and exports hummingd_quantize).

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/cubin_info.h"
#include "kernels/gpu_target.h"
#include "kernels/nvrtc_compiler.h"
#include "kernels/plan.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"
#include "tests/unit/kernels/compile_grid.h"
#include "tests/unit/kernels/quantize/quantize_grid.h"

namespace hummingd {
namespace {

const char* const kArchs[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90a"};

KernelRequest Request(const char* text, int64_t n, int64_t k,
                      KernelFamily family = KernelFamily::kDequant) {
  KernelRequest request;
  request.family = family;
  request.spec = Canonicalize(*ParseSpecText(text));
  request.shape.n = n;
  request.shape.k = k;
  request.gpu = *ParseGpuArch("sm_80");
  return request;
}

TEST(QuantizePlannerTest, OneWarpPerScaleEntryAndMIndependentGrid) {
  struct Case {
    const char* text;
    int64_t n, k, jobs;
  };
  const Case cases[] = {
      {"weight=uint4,group=128,scale=fp16", 4096, 4096, 4096 * 32},
      {"weight=uint4,group=16,scale=fp16", 64, 256, 64 * 8},  // 2 groups a job
      {"weight=e4m3,group=channel,scale=fp32", 96, 256, 96},
      {"weight=e4m3,group=128x128,scale=fp32", 256, 512, 2 * 4},
      {"weight=int8,group=tensor,scale=fp32", 64, 64, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    for (KernelFamily family : {KernelFamily::kDequant, KernelFamily::kGemm}) {
      const KernelRequest request = Request(c.text, c.n, c.k, family);
      EXPECT_EQ(QuantizeJobs(request), c.jobs);
      absl::StatusOr<PlanEntry> entry = PlanQuantize(request);
      ASSERT_TRUE(entry.ok()) << entry.status();
      EXPECT_EQ(entry->config.family, family);
      EXPECT_EQ(entry->config.skeleton, kQuantizeSkeleton);
      EXPECT_EQ(entry->config.text, "threads=128");
      EXPECT_EQ(entry->launch.block_x, 128);
      EXPECT_EQ(entry->launch.grid_x, (c.jobs + 3) / 4);
      EXPECT_EQ(entry->launch.m_per_block_x, 0);
      EXPECT_EQ(entry->m_min, 1);
      EXPECT_EQ(entry->m_max, kDefaultMaxM);
    }
  }
}

TEST(QuantizePlannerTest, RefusesUnsupportedRequestsNamingTheField) {
  absl::StatusOr<PlanEntry> entry = PlanQuantize(
      Request("weight=uint4,group=128,act=e4m3,act_scale=token", 128, 256));
  EXPECT_EQ(entry.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(entry.status().message().find("spec.activation_type"),
            std::string::npos);
  entry = PlanQuantize(Request("weight=uint4,group=128", 128, 200));
  EXPECT_EQ(entry.status().code(), absl::StatusCode::kInvalidArgument);
  entry = PlanQuantize(Request("weight=uint4,group=128x128", 64, 256));
  EXPECT_EQ(entry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(entry.status().message().find("scale tile"), std::string::npos);
}

TEST(QuantizeCodegenTest, StubIncludesTheSkeletonAndRefusesForeignConfigs) {
  const KernelRequest request =
      Request("weight=uint4,group=128,scale=bf16,zero=float,act=bf16", 64, 256);
  absl::StatusOr<PlanEntry> entry = PlanQuantize(request);
  ASSERT_TRUE(entry.ok());
  absl::StatusOr<KernelSource> source = GenerateStub(request, entry->config);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ(source->entry, kQuantizeEntry);
  EXPECT_NE(source->source.find("#include \"pack/quantize.cuh\""),
            std::string::npos);
  EXPECT_NE(source->source.find("hd::ZeroKind::kFloat"), std::string::npos);
  EXPECT_NE(source->source.find("/*activation_type=*/hd::ScalarType::kBf16"),
            std::string::npos);
  KernelConfig wrong = entry->config;
  wrong.threads_per_block = 256;
  EXPECT_EQ(GenerateStub(request, wrong).status().code(),
            absl::StatusCode::kInvalidArgument);
}

absl::Status CheckCompiled(const testing::CompileJob& job,
                           const KernelSource& source,
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
  return absl::OkStatus();
}

TEST(QuantizeCompileTest, QuantizeKernelCompilesForEveryGridSpecAndArch) {
  std::vector<testing::CompileJob> jobs;
  for (const char* arch : kArchs) {
    const absl::StatusOr<GpuTarget> gpu = ParseGpuArch(arch);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    for (const testing::QuantizeGridSpec& grid : testing::QuantizeGrid()) {
      KernelRequest request = Request(grid.text, grid.n, grid.k);
      request.gpu = *gpu;
      absl::StatusOr<PlanEntry> entry = PlanQuantize(request);
      ASSERT_TRUE(entry.ok()) << grid.text << ": " << entry.status();
      testing::CompileJob job;
      job.request = request;
      job.config = entry->config;
      job.label = std::string(arch) + " " + grid.text;
      jobs.push_back(std::move(job));
    }
  }
  unsigned threads = 0;
  const std::vector<testing::CompileResult> results =
      testing::CompileAll(jobs, CheckCompiled, &threads);
  testing::ExpectCompiledWithinBudget(
      jobs, results, threads, "quantize", std::size(kArchs),
      [](const testing::CompileJob&) { return true; });
}

}  // namespace
}  // namespace hummingd
