// Every kernel the planner emits for a covering grid of dequant specs
// compiles with NVRTC for every CI arch, and each cubin targets its arch and
// exports the entry point. Compiles run on a pool of hardware_concurrency
// threads (NVRTC is thread-safe per program).

#include "tests/unit/kernels/compile_grid.h"

#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/cubin_info.h"
#include "kernels/gpu_target.h"
#include "kernels/layer_shape.h"
#include "kernels/nvrtc_compiler.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"

namespace hummingd {
namespace {

struct GridSpec {
  const char* text;
  int64_t n;
  int64_t k;
};

// Every weight type x every scale dtype x every granularity x each zero
// kind x each secondary kind x both outputs, covered pairwise-ish rather than
// as a full product.
constexpr GridSpec kGrid[] = {
    {"weight=uint1,group=128,scale=fp16", 256, 1024},
    {"weight=uint2,group=64,scale=bf16,out=bf16", 256, 1024},
    {"weight=uint3,group=32,scale=fp32", 128, 768},
    {"weight=uint4,group=128,scale=fp16", 4096, 4096},
    {"weight=uint5,group=16,scale=fp16,scale2=channel", 64, 1024},
    {"weight=uint6,group=channel,scale=e4m3", 96, 512},
    {"weight=uint7,group=tensor,scale=fp32,scale2=tensor", 32, 224},
    {"weight=uint8,group=256,scale=ue8m0,out=bf16", 512, 2048},
    {"weight=uint4,group=128,scale=fp16,zero=int", 4096, 11008},
    {"weight=uint4,group=64,scale=bf16,zero=int,act=bf16,out=bf16", 1024, 4096},
    {"weight=uint4,group=128,scale=fp16,zero=float", 2048, 2048},
    {"weight=uint4,group=32,scale=bf16,zero=float,act=bf16,out=bf16,scale2="
     "channel",
     512, 512},
    {"weight=uint4,group=128x128,scale=fp32,zero=int", 1024, 1024},
    {"weight=uint4,group=16,scale=e4m3", 256, 256},
    {"weight=uint2,group=16,scale=e5m2,zero=int,scale2=channel", 128, 256},
    {"weight=int4,group=128,scale=fp16", 4096, 4096},
    {"weight=int4,group=channel,scale=bf16,out=bf16", 1024, 2048},
    {"weight=int8,group=channel,scale=fp32,scale2=tensor", 2048, 1024},
    {"weight=int8,group=tensor,scale=e5m2", 256, 512},
    {"weight=int2,group=tensor,scale=fp16,out=bf16", 64, 64},
    {"weight=e4m3,group=128x128,scale=fp32,act=bf16,out=bf16", 7168, 2048},
    {"weight=e4m3,group=channel,scale=fp32,scale2=tensor", 1024, 1024},
    {"weight=e4m3,group=tensor,scale=e4m3", 256, 256},
    {"weight=e5m2,group=tensor,scale=fp16", 256, 512},
    {"weight=e5m2,group=128,scale=bf16,out=bf16", 512, 1024},
    {"weight=e2m1,group=16,scale=e4m3,scale2=tensor", 4096, 4096},
    {"weight=e2m1,group=32,scale=ue8m0,out=bf16", 2880, 2880},
    {"weight=e3m2,group=32,scale=ue8m0", 256, 1024},
    {"weight=e2m3,group=32,scale=e5m2,scale2=channel", 256, 1024},
    {"weight=e2m3,group=32x64,scale=bf16,out=bf16", 512, 512},
};

const char* const kArchs[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90a"};

using Job = testing::CompileJob;

absl::Status CheckCompiled(const Job& job, const CompiledKernel& kernel) {
  absl::StatusOr<CubinInfo> info = InspectCubin(kernel.cubin);
  if (!info.ok()) return info.status();
  if (info->sm != job.request.gpu.sm ||
      info->arch_specific != job.request.gpu.arch_specific) {
    return absl::InternalError("cubin targets " + info->ArchName());
  }
  if (std::find(info->kernels.begin(), info->kernels.end(),
                "hummingd_dequant") == info->kernels.end()) {
    return absl::InternalError("cubin lacks hummingd_dequant");
  }
  if (!CubinRunsOn(*info, job.request.gpu)) {
    return absl::InternalError("cubin does not run on its own arch");
  }
  return absl::OkStatus();
}

TEST(CompileGridTest, EveryPlannedDequantKernelCompilesForEveryArch) {
  std::vector<Job> jobs;
  for (const char* arch : kArchs) {
    const absl::StatusOr<GpuTarget> gpu = ParseGpuArch(arch);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    for (const GridSpec& grid : kGrid) {
      absl::StatusOr<QuantSpec> spec = ParseSpecText(grid.text);
      ASSERT_TRUE(spec.ok()) << grid.text << ": " << spec.status();
      Job job;
      job.request.family = KernelFamily::kDequant;
      job.request.spec = Canonicalize(*spec);
      job.request.shape.n = grid.n;
      job.request.shape.k = grid.k;
      job.request.gpu = *gpu;
      ASSERT_TRUE(ValidateSpec(job.request.spec).ok()) << grid.text;
      ASSERT_TRUE(ValidateShape(job.request.spec, job.request.shape,
                                KernelFamily::kDequant, ShapeLimits{})
                      .ok())
          << grid.text;
      absl::StatusOr<Plan> plan = PlanKernels(job.request);
      ASSERT_TRUE(plan.ok()) << plan.status();
      ASSERT_FALSE(plan->entries.empty());
      job.config = plan->entries[0].config;
      job.label = std::string(arch) + " " + grid.text +
                  " N=" + std::to_string(grid.n) +
                  " K=" + std::to_string(grid.k);
      jobs.push_back(std::move(job));
    }
  }

  unsigned threads = 0;
  const std::vector<testing::CompileResult> results = testing::CompileAll(
      jobs,
      [](const Job& job, const KernelSource&, const CompiledKernel& kernel) {
        return CheckCompiled(job, kernel);
      },
      &threads);
  testing::ExpectCompiledWithinBudget(
      jobs, results, threads, "dequant", std::size(kArchs),
      [](const testing::CompileJob&) { return true; });
}

}  // namespace
}  // namespace hummingd
