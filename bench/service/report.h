#pragma once

// The bench's results: the targets (hit latency and throughput against the
// echo floor), and their rendering as a markdown table and as JSON.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench/service/client_load.h"
#include "bench/service/cold_compile.h"
#include "bench/service/requests.h"

namespace hummingd::bench {

struct MachineInfo {
  int cores = 0;
  std::string cpu_model;
};
// From std::thread::hardware_concurrency and /proc/cpuinfo.
MachineInfo ReadMachineInfo();

struct LoadRow {
  int concurrency = 0;
  LoadResult echo;
  LoadResult hummingd;
};

// hummingd / echo for one metric at one concurrency, against its limit.
struct TargetCheck {
  std::string metric;  // "p50", "p99" or "throughput"
  int concurrency = 0;
  double ratio = 0;
  double limit = 0;
  bool at_least = false;  // true: ratio >= limit passes; false: <= passes
  bool pass = false;
};

// The service targets: p50 at 1 client <= 1.3x echo; throughput at 16 and
// 64 clients >= 0.8x echo; p99 at 64 clients <= 1.5x echo. Levels that were
// not run are skipped.
std::vector<TargetCheck> EvaluateTargets(const std::vector<LoadRow>& rows);

struct HitKernel {
  BenchCase bench_case;
  int64_t cubin_bytes = 0;
  int64_t request_bytes = 0;
  int64_t response_bytes = 0;       // serialized GetKernelsResponse
  int64_t echo_payload_bytes = 0;   // EchoResponse.payload length
  int64_t echo_response_bytes = 0;  // serialized EchoResponse
};

struct BenchReport {
  std::string commit;
  MachineInfo machine;
  GpuProfile gpu;
  int compile_threads = 0;
  double warmup_seconds = 0;
  double duration_seconds = 0;
  int rounds = 0;
  std::vector<ColdResult> cold;
  HitKernel hit;
  std::vector<LoadRow> rows;
  std::vector<TargetCheck> checks;
  std::map<std::string, int64_t> daemon_counters;  // Stats after the run
  std::vector<std::string> notes;
};

std::string FormatMarkdown(const BenchReport& report);
std::string FormatJson(const BenchReport& report);

}  // namespace hummingd::bench
