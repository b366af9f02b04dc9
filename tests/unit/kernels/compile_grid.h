#pragma once

// The compile-grid machinery both grid tests share (dequant in
// compiler/compile_grid_test.cc, GEMM in gemm/gemm_compile_test.cc): compile
// a list of (request, config) jobs over every core, check each cubin, and
// report the median NVRTC time per arch against the design budget.

#include <algorithm>
#include <atomic>
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
  double compile_ms = 0;
};

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
      absl::StatusOr<CompiledKernel> kernel =
          CompileKernel(*source, jobs[i].request.gpu);
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
// records the median compile time per arch of the jobs `timed` selects and
// expects it within the budget (well under a second per kernel on one core
// by design; the bound is loose so that a loaded CI machine stays green).
inline void ExpectCompiledWithinBudget(
    const std::vector<CompileJob>& jobs,
    const std::vector<CompileResult>& results, unsigned threads,
    const std::string& what, size_t expected_archs,
    const std::function<bool(const CompileJob&)>& timed) {
  std::map<std::string, std::vector<double>> times_by_arch;
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_TRUE(results[i].status.ok())
        << jobs[i].label << ": " << results[i].status;
    if (results[i].status.ok() && timed(jobs[i])) {
      times_by_arch[jobs[i].request.gpu.ArchName()].push_back(
          results[i].compile_ms);
    }
  }
  for (auto& [arch, times] : times_by_arch) {
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    std::cout << "[ compile  ] " << what << " " << arch << ": " << times.size()
              << " kernels, median " << median << " ms, max " << times.back()
              << " ms (" << threads << " threads)\n";
    ::testing::Test::RecordProperty("median_" + what + "_compile_ms_" + arch,
                                    std::to_string(median));
    EXPECT_LT(median, 2000.0) << arch;
  }
  EXPECT_EQ(times_by_arch.size(), expected_archs);
}

}  // namespace hummingd::testing
