#pragma once

// Splits independent work over the host's cores: body(worker, workers) runs
// on min(cores, work_items) threads (at least one), and worker w takes the
// items w, w + workers, ... For the CPU references and checks of tests and
// benchmarks (whole-layer loops that took seconds on one core), not for
// request paths.

#include <algorithm>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

namespace hummingd {

// Workers for work_items items of which each worker should get at least
// min_items_per_worker (thread start-up costs ~10 us; tiny loops stay on
// the calling thread).
inline int ParallelWorkerCount(int64_t work_items,
                               int64_t min_items_per_worker = 1) {
  const int64_t cores =
      std::max<int64_t>(1, std::thread::hardware_concurrency());
  const int64_t by_work =
      work_items / std::max<int64_t>(1, min_items_per_worker);
  return static_cast<int>(std::max<int64_t>(1, std::min(cores, by_work)));
}

// The minimum items per worker for items of `work_per_item` elementary
// steps each (weights, codes): at least 64 K steps per thread, so that a
// thread's start-up stays a small part of its work.
inline int64_t MinItemsPerWorker(int64_t work_per_item) {
  constexpr int64_t kMinWorkPerThread = int64_t{1} << 16;
  return std::max<int64_t>(
      1, kMinWorkPerThread / std::max<int64_t>(1, work_per_item));
}

// If the system refuses a thread, the workers that did not start run on
// the calling thread after the others have been joined: the loop still
// covers every item.
template <typename Body>
void ParallelFor(int64_t work_items, Body body,
                 int64_t min_items_per_worker = 1) {
  const int workers = ParallelWorkerCount(work_items, min_items_per_worker);
  if (workers == 1) {
    body(0, 1);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(workers);
  int started = 0;
  try {
    for (; started < workers; ++started) {
      pool.emplace_back(body, started, workers);
    }
  } catch (const std::system_error&) {
    // Fewer threads than asked for: the rest below.
  }
  for (std::thread& thread : pool) thread.join();
  for (int t = started; t < workers; ++t) body(t, workers);
}

}  // namespace hummingd
