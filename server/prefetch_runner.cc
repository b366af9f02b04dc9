#include "server/prefetch_runner.h"

#include <string>

namespace hummingd {
namespace {

int CountOutcome(const v1::KernelSet& set, v1::CacheOutcome outcome) {
  int count = 0;
  for (const v1::Kernel& kernel : set.kernels()) {
    if (kernel.outcome() == outcome) ++count;
  }
  return count;
}

}  // namespace

PrefetchOutcome RunPrefetch(
    KernelResolver& resolver, const RequestLimits& limits,
    const std::vector<const v1::KernelRequest*>& requests, absl::Time deadline,
    const std::function<bool(const v1::PrefetchProgress&)>& report) {
  PrefetchOutcome outcome;
  const int total = static_cast<int>(requests.size());
  const absl::Time started = absl::Now();
  std::vector<absl::StatusOr<PendingKernelSet>> pending;
  pending.reserve(total);
  for (const v1::KernelRequest* item : requests) {
    absl::StatusOr<KernelRequest> parsed =
        KernelRequestFromProto(*item, limits);
    if (!parsed.ok()) {
      ++outcome.invalid;
      pending.push_back(parsed.status());
      continue;
    }
    pending.push_back(resolver.Begin(*parsed, CompilePriority::kPrefetch));
  }
  for (int i = 0; i < total; ++i) {
    ++outcome.items;
    v1::PrefetchProgress progress;
    progress.set_index(i);
    progress.set_total(total);
    progress.set_name(requests[i]->name());
    absl::StatusOr<v1::KernelSet> set =
        pending[i].ok()
            ? resolver.Finish(*pending[i], deadline, /*metadata_only=*/true)
            : absl::StatusOr<v1::KernelSet>(pending[i].status());
    if (set.ok()) {
      progress.set_kernels(set->kernels_size());
      progress.set_compiled(CountOutcome(*set, v1::CACHE_OUTCOME_COMPILED) +
                            CountOutcome(*set, v1::CACHE_OUTCOME_SHARED));
      progress.set_cached(CountOutcome(*set, v1::CACHE_OUTCOME_HIT));
    } else {
      progress.set_status_code(static_cast<int>(set.status().code()));
      progress.set_status_message(std::string(set.status().message()));
    }
    progress.set_elapsed_ms(absl::ToDoubleMilliseconds(absl::Now() - started));
    if (!report(progress)) {
      outcome.stopped = true;
      break;
    }
  }
  return outcome;
}

}  // namespace hummingd
