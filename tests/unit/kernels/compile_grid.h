#pragma once

// The compile-grid machinery both grid tests share (dequant in
// compiler/compile_grid_test.cc, GEMM in gemm/gemm_compile_test.cc): compile
// a list of (request, config) jobs over every core, check each cubin, and
// report the median NVRTC time per arch against the design budget.
//
// The budget is checked on the compiling thread's CPU time, not on wall
// time: ctest runs these grids beside other tests on a 2-core CI machine,
// where a compile's wall time doubles with the load (a CI run once measured
// a 2.03 s wall-time median for sm_90a) while its CPU time does not. NVRTC
// compiles on the calling thread, so that thread's CPU time is the compile's
// cost on one core, which is what KERNELS.md budgets.

#include <algorithm>
#include <atomic>
#include <ctime>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/nvrtc_compiler.h"
#include "kernels/plan.h"

namespace hummingd::testing {

struct CompileJob {
  KernelRequest request;
  KernelConfig config;
  std::string label;
};

struct CompileResult {
  absl::Status status = absl::OkStatus();
  double compile_ms = 0;      // wall time, as the daemon records it
  double compile_cpu_ms = 0;  // the compiling thread's CPU time
};

inline double ThreadCpuMs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 +
         static_cast<double>(now.tv_nsec) * 1e-6;
}

using CubinCheck = std::function<absl::Status(
    const CompileJob&, const KernelSource&, const CompiledKernel&)>;

// Compiles every job (one thread per core) and checks each cubin.
inline std::vector<CompileResult> CompileAll(
    const std::vector<CompileJob>& jobs, const CubinCheck& check,
    unsigned* threads_used) {
  std::vector<CompileResult> results(jobs.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      absl::StatusOr<KernelSource> source =
          GenerateStub(jobs[i].request, jobs[i].config);
      if (!source.ok()) {
        results[i].status = source.status();
        continue;
      }
      const double cpu_start_ms = ThreadCpuMs();
      absl::StatusOr<CompiledKernel> kernel =
          CompileKernel(*source, jobs[i].request.gpu);
      results[i].compile_cpu_ms = ThreadCpuMs() - cpu_start_ms;
      if (!kernel.ok()) {
        results[i].status = kernel.status();
        continue;
      }
      results[i].compile_ms = kernel->compile_ms;
      results[i].status = check(jobs[i], *source, *kernel);
    }
  };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& thread : pool) thread.join();
  *threads_used = threads;
  return results;
}

// Expects every job to have compiled and passed its check; prints and
// records the median compile CPU time per arch of the jobs `timed` selects
// (with the median wall time beside it) and expects the CPU time within the
// budget (well under a second per kernel on one core by design; the bound
// is twice that, for slower CI cores).
inline void ExpectCompiledWithinBudget(
    const std::vector<CompileJob>& jobs,
    const std::vector<CompileResult>& results, unsigned threads,
    const std::string& what, size_t expected_archs,
    const std::function<bool(const CompileJob&)>& timed) {
  struct ArchTimes {
    std::vector<double> cpu_ms;
    std::vector<double> wall_ms;
  };
  std::map<std::string, ArchTimes> times_by_arch;
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_TRUE(results[i].status.ok())
        << jobs[i].label << ": " << results[i].status;
    if (results[i].status.ok() && timed(jobs[i])) {
      ArchTimes& times = times_by_arch[jobs[i].request.gpu.ArchName()];
      times.cpu_ms.push_back(results[i].compile_cpu_ms);
      times.wall_ms.push_back(results[i].compile_ms);
    }
  }
  const auto median_of = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
  };
  for (const auto& [arch, times] : times_by_arch) {
    const double cpu_median = median_of(times.cpu_ms);
    const double wall_median = median_of(times.wall_ms);
    std::cout << "[ compile  ] " << what << " " << arch << ": "
              << times.cpu_ms.size() << " kernels, median " << cpu_median
              << " ms CPU (max "
              << *std::max_element(times.cpu_ms.begin(), times.cpu_ms.end())
              << "), " << wall_median << " ms wall (" << threads
              << " threads)\n";
    ::testing::Test::RecordProperty("median_" + what + "_compile_ms_" + arch,
                                    std::to_string(wall_median));
    ::testing::Test::RecordProperty(
        "median_" + what + "_compile_cpu_ms_" + arch,
        std::to_string(cpu_median));
    EXPECT_LT(cpu_median, 2000.0) << arch;
  }
  EXPECT_EQ(times_by_arch.size(), expected_archs);
}

}  // namespace hummingd::testing
