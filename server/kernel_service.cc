#include "server/kernel_service.h"

#include <atomic>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "server/grpc_status.h"
#include "server/prefetch_runner.h"

namespace hummingd {
namespace {

absl::Time DeadlineOf(const grpc::ServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
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
                                      grpc::ByteBuffer* response) {
  KernelSetMemo::EntryPtr memoized = memo_.Lookup(memo_key);
  if (memoized == nullptr) return false;
  for (const std::string& key : memoized->artifact_keys) {
    absl::StatusOr<ArtifactPtr> stored = store_->GetArtifact(key);
    if (!stored.ok() || *stored == nullptr) {
      memo_.Erase(memo_key);
      return false;
    }
  }
  *response = memoized->response;  // shares the slices, copies no bytes
  memo_hits_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

grpc::Status KernelServiceImpl::CompleteGetKernels(
    const PendingKernelSet& pending, bool metadata_only,
    const std::string& memo_key, grpc::ByteBuffer* response) {
  absl::StatusOr<v1::KernelSet> set =
      resolver_->Finish(pending, absl::InfiniteFuture(), metadata_only);
  if (!set.ok()) {
    failed_requests_.fetch_add(1, std::memory_order_relaxed);
    log::Warn(absl::StrCat("event=get_kernels_failed error=\"",
                           set.status().message(), "\""));
    return ToGrpcStatus(set.status());
  }
  v1::GetKernelsResponse message;
  *message.mutable_kernel_set() = *std::move(set);
  {
    grpc::Slice slice(message.SerializeAsString());
    *response = grpc::ByteBuffer(&slice, 1);
  }

  // The memo answers later asks for the same bytes as hits.
  auto memoized = std::make_shared<MemoizedKernelSet>();
  for (auto* kernels : {message.mutable_kernel_set()->mutable_kernels(),
                        message.mutable_kernel_set()->mutable_prepare()}) {
    for (v1::Kernel& kernel : *kernels) {
      kernel.set_outcome(v1::CACHE_OUTCOME_HIT);
      if (memoized->artifact_keys.empty() ||
          memoized->artifact_keys.back() != kernel.artifact_key()) {
        memoized->artifact_keys.push_back(kernel.artifact_key());
      }
    }
  }
  message.mutable_kernel_set()->set_plan_cached(true);
  std::string bytes = message.SerializeAsString();
  memoized->bytes = static_cast<int64_t>(bytes.size());
  grpc::Slice memo_slice(bytes);
  memoized->response = grpc::ByteBuffer(&memo_slice, 1);
  memo_.Insert(memo_key, std::move(memoized));
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* KernelServiceImpl::GetKernels(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();

  std::string request_bytes;
  {
    std::vector<grpc::Slice> slices;
    if (!request->Dump(&slices).ok()) {
      reactor->Finish(grpc::Status(grpc::StatusCode::INTERNAL,
                                   "cannot read the request bytes"));
      return reactor;
    }
    for (const grpc::Slice& slice : slices) {
      request_bytes.append(reinterpret_cast<const char*>(slice.begin()),
                           slice.size());
    }
  }
  if (ServeFromMemo(request_bytes, response)) {
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  v1::GetKernelsRequest message;
  if (!message.ParseFromString(request_bytes)) {
    invalid_requests_.fetch_add(1, std::memory_order_relaxed);
    reactor->Finish(grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        "request: not a valid hummingd.v1.GetKernelsRequest message"));
    return reactor;
  }
  absl::StatusOr<KernelRequest> parsed =
      KernelRequestFromProto(message.request(), limits_);
  if (!parsed.ok()) {
    invalid_requests_.fetch_add(1, std::memory_order_relaxed);
    reactor->Finish(ToGrpcStatus(parsed.status()));
    return reactor;
  }
  absl::StatusOr<PendingKernelSet> begun =
      resolver_->Begin(*parsed, CompilePriority::kForeground);
  if (!begun.ok()) {
    failed_requests_.fetch_add(1, std::memory_order_relaxed);
    reactor->Finish(ToGrpcStatus(begun.status()));
    return reactor;
  }

  // Shared by the compile continuations; the last one to arrive answers.
  struct Call {
    PendingKernelSet pending;
    bool metadata_only = false;
    std::string memo_key;
    grpc::ByteBuffer* response = nullptr;
    grpc::ServerUnaryReactor* reactor = nullptr;
    std::atomic<int> outstanding{0};
  };
  auto call = std::make_shared<Call>();
  call->pending = *std::move(begun);
  call->metadata_only = message.metadata_only();
  call->memo_key = std::move(request_bytes);
  call->response = response;
  call->reactor = reactor;
  std::vector<std::shared_ptr<const CompileTicket>> tickets;
  for (const PendingKernelSet::Artifact& artifact : call->pending.artifacts) {
    if (artifact.ticket != nullptr) tickets.push_back(artifact.ticket);
  }
  // One extra count is held while registering, so that a compile finishing
  // during registration cannot answer before every continuation is in place.
  call->outstanding.store(static_cast<int>(tickets.size()) + 1);
  auto arrive = [this, call] {
    if (call->outstanding.fetch_sub(1) == 1) {
      call->reactor->Finish(CompleteGetKernels(
          call->pending, call->metadata_only, call->memo_key, call->response));
    }
  };
  for (const auto& ticket : tickets) ticket->OnDone(arrive);
  arrive();
  return reactor;
}

grpc::Status KernelServiceImpl::Prefetch(
    grpc::ServerContext* context, const v1::PrefetchRequest* request,
    grpc::ServerWriter<v1::PrefetchProgress>* writer) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  if (request->requests_size() > kMaxPrefetchItems) {
    invalid_requests_.fetch_add(1, std::memory_order_relaxed);
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("request.requests: at most ", kMaxPrefetchItems,
                     " items (got ", request->requests_size(), ")")));
  }
  std::vector<const v1::KernelRequest*> items;
  items.reserve(request->requests_size());
  for (const v1::KernelRequest& item : request->requests()) {
    items.push_back(&item);
  }
  const PrefetchOutcome outcome = RunPrefetch(
      *resolver_, limits_, items, DeadlineOf(*context),
      [&](const v1::PrefetchProgress& progress) {
        return !context->IsCancelled() && writer->Write(progress);
      },
      [&] { return !context->IsCancelled() && resolver_->AcceptsPrefetch(); });
  prefetch_items_.fetch_add(outcome.items, std::memory_order_relaxed);
  invalid_requests_.fetch_add(outcome.invalid, std::memory_order_relaxed);
  if (outcome.stopped) {
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        "client went away; queued compiles continue");
  }
  if (outcome.not_begun > 0) {
    return ToGrpcStatus(absl::UnavailableError(
        absl::StrCat("daemon is shutting down: ", outcome.not_begun, " of ",
                     request->requests_size(), " items were not begun")));
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
  counters["compiles_displaced"] = pool.displaced;
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
  counters["failed_requests"] =
      failed_requests_.load(std::memory_order_relaxed);
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
