#pragma once

// Cold compile: the first GetKernels for a kernel the cache has never seen,
// timed by the client (wall) and by the daemon (compile_ms per kernel), then
// a second call to confirm it is now a hit.

#include <cstdint>
#include <string>

#include "bench/service/requests.h"
#include "hummingd/v1/kernel_service.grpc.pb.h"

namespace hummingd::bench {

struct ColdResult {
  BenchCase bench_case;
  std::string error;          // empty when both calls succeeded
  double first_call_ms = 0;   // client wall time of the compiling call
  double compile_ms_sum = 0;  // daemon-reported, kernels compiled by the call
  double compile_ms_max = 0;
  int compiled = 0;  // distinct artifacts compiled (or shared) by the call
  int kernels = 0;   // M-range entries in the set
  int cubins = 0;    // distinct cubins in the set
  int64_t cubin_bytes = 0;       // sum over distinct cubins
  double second_call_ms = 0;     // client wall time of the repeat
  bool second_call_hit = false;  // every kernel of the repeat was a HIT
  int64_t request_bytes = 0;     // serialized GetKernelsRequest
  int64_t response_bytes = 0;    // serialized GetKernelsResponse (with cubins)
  v1::GetKernelsRequest request;
};

ColdResult MeasureColdCompile(v1::KernelService::Stub& stub,
                              const BenchCase& bench_case,
                              const GpuProfile& gpu);

}  // namespace hummingd::bench
