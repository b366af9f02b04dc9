#pragma once

// Splits independent work over the host's cores: body(worker, workers) runs
// on min(cores, work_items) threads (at least one), and worker w takes the
// items w, w + workers, ... For the CPU references and checks of tests and
// benchmarks (whole-layer loops that took seconds on one core), not for
// request paths.

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace hummingd {

inline int ParallelWorkerCount(int64_t work_items) {
  const int64_t cores =
      std::max<int64_t>(1, std::thread::hardware_concurrency());
  return static_cast<int>(std::max<int64_t>(1, std::min(cores, work_items)));
}

template <typename Body>
void ParallelFor(int64_t work_items, Body body) {
  const int workers = ParallelWorkerCount(work_items);
  if (workers == 1) {
    body(0, 1);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(workers);
  for (int t = 0; t < workers; ++t) pool.emplace_back(body, t, workers);
  for (std::thread& thread : pool) thread.join();
}

}  // namespace hummingd
