#include "server/prefetch_runner.h"

#include <string>

#include "absl/container/flat_hash_set.h"

namespace hummingd {
namespace {

// Counts each distinct artifact of the set once (M ranges may share one,
// and prepare kernels count too), by the outcome it was served with.
struct ArtifactCounts {
  int kernels = 0;
  int compiled = 0;
  int cached = 0;
};

ArtifactCounts CountArtifacts(const v1::KernelSet& set) {
  ArtifactCounts counts;
  absl::flat_hash_set<std::string> seen;
  for (const auto* kernels : {&set.kernels(), &set.prepare()}) {
    for (const v1::Kernel& kernel : *kernels) {
      if (!seen.insert(kernel.artifact_key()).second) continue;
      ++counts.kernels;
      if (kernel.outcome() == v1::CACHE_OUTCOME_HIT) {
        ++counts.cached;
      } else {
        ++counts.compiled;  // compiled for this item, or by a concurrent one
      }
    }
  }
  return counts;
}

}  // namespace

PrefetchOutcome RunPrefetch(
    KernelResolver& resolver, const RequestLimits& limits,
    const std::vector<const v1::KernelRequest*>& requests, absl::Time deadline,
    const std::function<bool(const v1::PrefetchProgress&)>& report,
    const std::function<bool()>& keep_going) {
  PrefetchOutcome outcome;
  const int total = static_cast<int>(requests.size());
  const absl::Time started = absl::Now();
  std::vector<absl::StatusOr<PendingKernelSet>> pending;
  pending.reserve(total);
  bool stopped_beginning = false;
  for (const v1::KernelRequest* item : requests) {
    // Planning a GEMM item takes milliseconds: thousands of them kept a
    // shutting-down daemon busy for seconds past its grace period.
    if (!stopped_beginning && keep_going && !keep_going()) {
      stopped_beginning = true;
    }
    if (stopped_beginning) break;
    absl::StatusOr<KernelRequest> parsed =
        KernelRequestFromProto(*item, limits);
    if (!parsed.ok()) {
      ++outcome.invalid;
      pending.push_back(parsed.status());
      continue;
    }
    pending.push_back(resolver.Begin(*parsed, CompilePriority::kPrefetch));
  }
  const int begun = static_cast<int>(pending.size());
  outcome.not_begun = total - begun;
  for (int i = 0; i < begun; ++i) {
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
      const ArtifactCounts counts = CountArtifacts(*set);
      progress.set_kernels(counts.kernels);
      progress.set_compiled(counts.compiled);
      progress.set_cached(counts.cached);
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
