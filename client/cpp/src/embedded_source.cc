#include "client/cpp/src/embedded_source.h"

#include <algorithm>
#include <filesystem>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"

namespace hummingd::client {
namespace {

int CountOutcome(const v1::KernelSet& set, v1::CacheOutcome outcome) {
  return static_cast<int>(std::count_if(
      set.kernels().begin(), set.kernels().end(),
      [outcome](const v1::Kernel& kernel) { return kernel.outcome() == outcome; }));
}

}  // namespace

absl::StatusOr<std::unique_ptr<EmbeddedSource>> EmbeddedSource::Open(
    const EmbeddedSourceOptions& options) {
  std::error_code error;
  std::filesystem::create_directories(options.cache_dir, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("embedded cache dir ", options.cache_dir,
                     ": cannot create it: ", error.message()));
  }
  std::unique_ptr<EmbeddedSource> source(new EmbeddedSource(options));
  RocksStoreOptions store_options;
  store_options.directory = options.cache_dir;
  ASSIGN_OR_RETURN(source->store_, OpenRocksStore(store_options));

  CompileSchedulerOptions pool_options;
  pool_options.threads =
      options.compile_threads > 0
          ? options.compile_threads
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  source->scheduler_ = std::make_unique<CompileScheduler>(pool_options);
  source->resolver_ = std::make_unique<KernelResolver>(source->store_.get(),
                                                       source->scheduler_.get());
  return source;
}

EmbeddedSource::~EmbeddedSource() {
  resolver_.reset();
  scheduler_.reset();
  store_.reset();
}

std::string EmbeddedSource::Describe() const {
  return absl::StrCat("embedded cache_dir=", options_.cache_dir);
}

absl::StatusOr<v1::KernelSet> EmbeddedSource::Resolve(
    const v1::KernelRequest& request) {
  ASSIGN_OR_RETURN(KernelRequest parsed,
                   KernelRequestFromProto(request, limits_));
  ASSIGN_OR_RETURN(PendingKernelSet pending,
                   resolver_->Begin(parsed, CompilePriority::kForeground));
  return resolver_->Finish(pending,
                           absl::Now() + absl::Seconds(options_.timeout_seconds),
                           /*metadata_only=*/false);
}

absl::Status EmbeddedSource::Prefetch(
    const std::vector<v1::KernelRequest>& requests,
    const PrefetchCallback& progress) {
  const int total = static_cast<int>(requests.size());
  const absl::Time started = absl::Now();
  const absl::Time deadline = started + absl::Seconds(options_.timeout_seconds);
  // As the daemon does: submit everything so the whole pool works on the
  // manifest, then report items in order.
  std::vector<absl::StatusOr<PendingKernelSet>> pending;
  pending.reserve(total);
  for (const v1::KernelRequest& request : requests) {
    absl::StatusOr<KernelRequest> parsed =
        KernelRequestFromProto(request, limits_);
    pending.push_back(
        parsed.ok() ? resolver_->Begin(*parsed, CompilePriority::kPrefetch)
                    : absl::StatusOr<PendingKernelSet>(parsed.status()));
  }
  absl::Status first_error;
  for (int i = 0; i < total; ++i) {
    v1::PrefetchProgress message;
    message.set_index(i);
    message.set_total(total);
    message.set_name(requests[i].name());
    absl::StatusOr<v1::KernelSet> set =
        pending[i].ok()
            ? resolver_->Finish(*pending[i], deadline, /*metadata_only=*/true)
            : absl::StatusOr<v1::KernelSet>(pending[i].status());
    if (set.ok()) {
      message.set_kernels(set->kernels_size());
      message.set_compiled(CountOutcome(*set, v1::CACHE_OUTCOME_COMPILED) +
                           CountOutcome(*set, v1::CACHE_OUTCOME_SHARED));
      message.set_cached(CountOutcome(*set, v1::CACHE_OUTCOME_HIT));
    } else {
      message.set_status_code(static_cast<int>(set.status().code()));
      message.set_status_message(std::string(set.status().message()));
    }
    message.set_elapsed_ms(absl::ToDoubleMilliseconds(absl::Now() - started));
    if (first_error.ok()) first_error = PrefetchItemStatus(message);
    if (progress) progress(message);
  }
  return first_error;
}

}  // namespace hummingd::client
