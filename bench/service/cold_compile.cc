#include "bench/service/cold_compile.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"

namespace hummingd::bench {
namespace {

// Generous: a cold compile on a loaded 2-core machine is seconds, not minutes.
constexpr auto kColdDeadline = std::chrono::minutes(5);

grpc::Status TimedGetKernels(v1::KernelService::Stub& stub,
                             const v1::GetKernelsRequest& request,
                             v1::GetKernelsResponse* response, double* ms) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kColdDeadline);
  const auto start = std::chrono::steady_clock::now();
  grpc::Status status = stub.GetKernels(&context, request, response);
  *ms = std::chrono::duration<double, std::milli>(
            std::chrono::steady_clock::now() - start)
            .count();
  return status;
}

std::string Describe(const grpc::Status& status) {
  return absl::StrCat("grpc code ", static_cast<int>(status.error_code()), ": ",
                      status.error_message());
}

}  // namespace

ColdResult MeasureColdCompile(v1::KernelService::Stub& stub,
                              const BenchCase& bench_case,
                              const GpuProfile& gpu) {
  ColdResult result;
  result.bench_case = bench_case;
  result.request = MakeGetKernelsRequest(bench_case, gpu);
  result.request_bytes = static_cast<int64_t>(result.request.ByteSizeLong());

  v1::GetKernelsResponse first;
  grpc::Status status =
      TimedGetKernels(stub, result.request, &first, &result.first_call_ms);
  if (!status.ok()) {
    result.error = Describe(status);
    return result;
  }
  result.response_bytes = static_cast<int64_t>(first.ByteSizeLong());
  for (const v1::Kernel& kernel : first.kernel_set().kernels()) {
    ++result.kernels;
    if (!kernel.cubin().empty()) {
      ++result.cubins;
      result.cubin_bytes += static_cast<int64_t>(kernel.cubin().size());
    }
    const bool built_now = kernel.outcome() == v1::CACHE_OUTCOME_COMPILED ||
                           kernel.outcome() == v1::CACHE_OUTCOME_SHARED;
    // Ranges sharing a cubin repeat its compile_ms; count each cubin once.
    if (built_now && !kernel.cubin().empty()) {
      ++result.compiled;
      result.compile_ms_sum += kernel.compile_ms();
      result.compile_ms_max =
          std::max(result.compile_ms_max, kernel.compile_ms());
    }
  }

  v1::GetKernelsResponse second;
  status =
      TimedGetKernels(stub, result.request, &second, &result.second_call_ms);
  if (!status.ok()) {
    result.error = absl::StrCat("repeat call: ", Describe(status));
    return result;
  }
  result.second_call_hit = second.kernel_set().kernels_size() > 0;
  for (const v1::Kernel& kernel : second.kernel_set().kernels()) {
    if (kernel.outcome() != v1::CACHE_OUTCOME_HIT)
      result.second_call_hit = false;
  }
  return result;
}

}  // namespace hummingd::bench
