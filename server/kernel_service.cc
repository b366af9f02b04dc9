#include "server/kernel_service.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "common/logging.h"
#include "server/grpc_status.h"

namespace hummingd {
namespace {

absl::Time DeadlineOf(const grpc::ServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

int CountOutcome(const v1::KernelSet& set, v1::CacheOutcome outcome) {
  int count = 0;
  for (const v1::Kernel& kernel : set.kernels()) {
    if (kernel.outcome() == outcome) ++count;
  }
  return count;
}

}  // namespace

KernelServiceImpl::KernelServiceImpl(KernelStore* store,
                                     CompileScheduler* scheduler,
                                     KernelResolver* resolver,
                                     const RequestLimits& limits,
                                     int64_t memo_bytes)
    : store_(store),
      scheduler_(scheduler),
      resolver_(resolver),
      limits_(limits),
      memo_(memo_bytes) {}

bool KernelServiceImpl::ServeFromMemo(const std::string& memo_key,
                                      v1::GetKernelsResponse* response) {
  KernelSetMemo::ResponsePtr memoized = memo_.Lookup(memo_key);
  if (memoized == nullptr) return false;
  const auto& kernels = memoized->kernel_set().kernels();
  for (int i = 0; i < kernels.size(); ++i) {
    if (i > 0 && kernels[i].artifact_key() == kernels[i - 1].artifact_key()) {
      continue;
    }
    absl::StatusOr<ArtifactPtr> stored =
        store_->GetArtifact(kernels[i].artifact_key());
    if (!stored.ok() || *stored == nullptr) {
      memo_.Erase(memo_key);
      return false;
    }
  }
  *response = *memoized;
  memo_hits_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void KernelServiceImpl::Memoize(const std::string& memo_key,
                                const v1::GetKernelsResponse& response) {
  auto memoized = std::make_shared<v1::GetKernelsResponse>(response);
  for (v1::Kernel& kernel :
       *memoized->mutable_kernel_set()->mutable_kernels()) {
    kernel.set_outcome(v1::CACHE_OUTCOME_HIT);
  }
  memoized->mutable_kernel_set()->set_plan_cached(true);
  memo_.Insert(memo_key, std::move(memoized));
}

grpc::Status KernelServiceImpl::GetKernels(grpc::ServerContext* context,
                                           const v1::GetKernelsRequest* request,
                                           v1::GetKernelsResponse* response) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  // Deterministic serialization of the request as the client sent it; a
  // differently-encoded equal request merely misses the memo.
  std::string memo_key;
  {
    google::protobuf::io::StringOutputStream stream(&memo_key);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    request->SerializeToCodedStream(&coded);
  }
  if (ServeFromMemo(memo_key, response)) return grpc::Status::OK;

  absl::StatusOr<KernelRequest> parsed =
      KernelRequestFromProto(request->request(), limits_);
  if (!parsed.ok()) {
    invalid_requests_.fetch_add(1, std::memory_order_relaxed);
    return ToGrpcStatus(parsed.status());
  }
  absl::StatusOr<PendingKernelSet> pending =
      resolver_->Begin(*parsed, CompilePriority::kForeground);
  absl::StatusOr<v1::KernelSet> set =
      pending.ok() ? resolver_->Finish(*pending, DeadlineOf(*context),
                                       request->metadata_only())
                   : absl::StatusOr<v1::KernelSet>(pending.status());
  if (!set.ok()) {
    failed_requests_.fetch_add(1, std::memory_order_relaxed);
    log::Warn(absl::StrCat("event=get_kernels_failed error=\"",
                           set.status().message(), "\""));
    return ToGrpcStatus(set.status());
  }
  *response->mutable_kernel_set() = *std::move(set);
  Memoize(memo_key, *response);
  return grpc::Status::OK;
}

grpc::Status KernelServiceImpl::Prefetch(
    grpc::ServerContext* context, const v1::PrefetchRequest* request,
    grpc::ServerWriter<v1::PrefetchProgress>* writer) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  const int total = request->requests_size();
  const absl::Time started = absl::Now();
  // Submit everything first so the whole pool works on the manifest, then
  // report items in order as they complete.
  std::vector<absl::StatusOr<PendingKernelSet>> pending;
  pending.reserve(total);
  for (const v1::KernelRequest& item : request->requests()) {
    absl::StatusOr<KernelRequest> parsed =
        KernelRequestFromProto(item, limits_);
    if (!parsed.ok()) {
      invalid_requests_.fetch_add(1, std::memory_order_relaxed);
      pending.push_back(parsed.status());
      continue;
    }
    pending.push_back(resolver_->Begin(*parsed, CompilePriority::kPrefetch));
  }
  for (int i = 0; i < total; ++i) {
    prefetch_items_.fetch_add(1, std::memory_order_relaxed);
    v1::PrefetchProgress progress;
    progress.set_index(i);
    progress.set_total(total);
    progress.set_name(request->requests(i).name());
    absl::StatusOr<v1::KernelSet> set =
        pending[i].ok() ? resolver_->Finish(*pending[i], DeadlineOf(*context),
                                            /*metadata_only=*/true)
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
    if (context->IsCancelled() || !writer->Write(progress)) {
      return grpc::Status(grpc::StatusCode::CANCELLED,
                          "client went away; queued compiles continue");
    }
  }
  return grpc::Status::OK;
}

grpc::Status KernelServiceImpl::Stats(grpc::ServerContext* context,
                                      const v1::StatsRequest* request,
                                      v1::StatsResponse* response) {
  const StoreStats store = store_->Stats();
  const CompileSchedulerStats pool = scheduler_->Stats();
  const ResolverCounters resolver = resolver_->Counters();
  auto& counters = *response->mutable_counters();
  counters["compiles"] = resolver.compiles;
  counters["compile_failures"] = pool.compile_failures;
  counters["compile_jobs"] = pool.compiles;
  counters["singleflight_shared"] = pool.shared;
  counters["negative_cache_hits"] = pool.negative_hits;
  counters["compiles_queued"] = pool.queued;
  counters["compiles_running"] = pool.running;
  // A memo hit confirms its artifacts in the store, so it is already counted
  // among the store's hits.
  counters["hits"] = store.artifact_hits;
  counters["memo_hits"] = memo_hits_.load(std::memory_order_relaxed);
  counters["memo_entries"] = memo_.entries();
  counters["misses"] = store.artifact_misses;
  counters["memory_hits"] = store.memory_hits;
  counters["plan_hits"] = store.plan_hits;
  counters["plan_misses"] = store.plan_misses;
  counters["entries"] = store.artifact_entries;
  counters["plan_entries"] = store.plan_entries;
  counters["bytes"] = store.artifact_bytes;
  counters["max_bytes"] = store.max_bytes;
  counters["corrupt_dropped"] = store.corrupt_dropped;
  counters["evictions"] = store.evictions;
  counters["store_write_errors"] = resolver.store_write_errors;
  counters["requests"] = requests_.load(std::memory_order_relaxed);
  counters["invalid_requests"] =
      invalid_requests_.load(std::memory_order_relaxed);
  counters["failed_requests"] = failed_requests_.load(std::memory_order_relaxed);
  counters["prefetch_items"] = prefetch_items_.load(std::memory_order_relaxed);
  counters["uptime_seconds"] =
      static_cast<int64_t>(absl::ToDoubleSeconds(absl::Now() - started_));
  return grpc::Status::OK;
}

grpc::Status KernelServiceImpl::ListEntries(
    grpc::ServerContext* context, const v1::ListEntriesRequest* request,
    v1::ListEntriesResponse* response) {
  absl::StatusOr<std::vector<ArtifactListing>> listing =
      store_->ListArtifacts();
  if (!listing.ok()) return ToGrpcStatus(listing.status());
  for (const ArtifactListing& item : *listing) {
    v1::CacheEntry* entry = response->add_entries();
    entry->set_artifact_key(item.key);
    entry->set_entry(item.entry);
    entry->set_arch(item.arch);
    entry->set_description(item.description);
    entry->set_bytes(item.bytes);
    entry->set_compile_ms(item.compile_ms);
    entry->set_pinned(item.pinned);
  }
  return grpc::Status::OK;
}

grpc::Status KernelServiceImpl::Evict(grpc::ServerContext* context,
                                      const v1::EvictRequest* request,
                                      v1::EvictResponse* response) {
  if (request->all() == (request->artifact_keys_size() > 0)) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        "request: set exactly one of artifact_keys or all"));
  }
  if (request->all()) {
    absl::StatusOr<int64_t> evicted = store_->EvictAll();
    if (!evicted.ok()) return ToGrpcStatus(evicted.status());
    response->set_evicted(*evicted);
    return grpc::Status::OK;
  }
  int64_t evicted = 0;
  for (const std::string& key : request->artifact_keys()) {
    absl::Status status = store_->EvictArtifact(key);
    if (absl::IsNotFound(status)) continue;
    if (!status.ok()) return ToGrpcStatus(status);
    ++evicted;
  }
  response->set_evicted(evicted);
  return grpc::Status::OK;
}

}  // namespace hummingd
