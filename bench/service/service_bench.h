#pragma once

// One full bench run: start hummingd on a scratch socket and cache dir,
// cold-compile the cases, pick the hit kernel, start the echo floor sized to
// its response, and load both servers at each concurrency level.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/service/report.h"
#include "bench/service/requests.h"

namespace hummingd::bench {

struct BenchOptions {
  std::string hummingd_binary;
  std::string self_binary;  // this executable, spawned as the echo server
  std::string commit;
  int compile_threads = 2;
  std::vector<int> concurrency = {1, 16, 64};
  // Totals per server and level, split evenly over `rounds` windows that
  // alternate between the two servers.
  absl::Duration warmup = absl::Seconds(1);
  absl::Duration duration = absl::Seconds(3);
  int rounds = 4;
  GpuProfile gpu;
  std::vector<BenchCase> cold_cases;
  // The hit kernel is the single-cubin case whose cubin is closest to this.
  int64_t target_hit_cubin_bytes = 50 * 1024;
  std::vector<std::string> extra_daemon_flags;
};

absl::StatusOr<BenchReport> RunServiceBench(const BenchOptions& options);

}  // namespace hummingd::bench
