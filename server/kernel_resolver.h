#pragma once

// KernelResolver: request -> plan -> artifacts -> KernelSet. The one pipeline
// behind GetKernels and Prefetch. Hits are answered on the caller's thread;
// misses compile on the scheduler's pool and the caller only waits.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cache/kernel_store.h"
#include "hummingd/v1/kernel_service.pb.h"
#include "kernels/plan.h"
#include "server/compile_scheduler.h"

namespace hummingd {

// A resolution in progress: lookups done, compiles submitted.
struct PendingKernelSet {
  KernelRequest request;
  std::string canonical_spec;
  std::string plan_key;
  bool plan_cached = false;
  // The plan as cut for the request's max_m (served_ranges.h): its entries
  // are the ones the set holds; what is stored is always the whole plan.
  PlanRecord plan;
  struct Artifact {
    std::string key;
    ArtifactPtr cached;                           // set on a cache hit
    std::shared_ptr<const CompileTicket> ticket;  // set on a miss
    v1::CacheOutcome outcome = v1::CACHE_OUTCOME_UNSPECIFIED;
  };
  std::vector<Artifact> artifacts;  // distinct artifact keys, plan order
};

struct ResolverCounters {
  int64_t compiles = 0;  // NVRTC compiles run by this process
  int64_t store_write_errors = 0;
};

class KernelResolver {
 public:
  KernelResolver(KernelStore* store, CompileScheduler* scheduler);

  // `request` must be validated (KernelRequestFromProto does it). Only the
  // artifacts of the entries its max_m keeps (and the prepare kernels) are
  // looked up and compiled.
  absl::StatusOr<PendingKernelSet> Begin(const KernelRequest& request,
                                         CompilePriority priority);

  // Whether prefetch compiles are still accepted (not once shutdown began).
  bool AcceptsPrefetch() const;

  // Waits for the compiles (until `deadline`) and assembles the set.
  absl::StatusOr<v1::KernelSet> Finish(const PendingKernelSet& pending,
                                       absl::Time deadline, bool metadata_only);

  ResolverCounters Counters() const;

 private:
  absl::StatusOr<PlanRecord> BuildPlanRecord(const KernelRequest& request,
                                             const std::string& canonical_spec);
  CompileFunction MakeCompileFunction(const KernelRequest& request,
                                      const KernelConfig& config,
                                      const std::string& artifact_key);

  // Artifacts compiled while the store refused writes (disk full): served
  // from here so that a full disk costs one compile per kernel, not one per
  // request. Bounded; cleared when full.
  ArtifactPtr FindUnstored(const std::string& key);
  void KeepUnstored(const std::string& key, ArtifactPtr artifact);

  KernelStore* const store_;
  CompileScheduler* const scheduler_;
  absl::Mutex unstored_mutex_;
  absl::flat_hash_map<std::string, ArtifactPtr> unstored_
      ABSL_GUARDED_BY(unstored_mutex_);
  std::atomic<int64_t> compiles_{0};
  std::atomic<int64_t> store_write_errors_{0};
};

}  // namespace hummingd
