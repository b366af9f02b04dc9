#include "client/cpp/src/embedded_source.h"

#include <algorithm>
#include <filesystem>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/prefetch_runner.h"

namespace hummingd::client {

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
  source->resolver_ = std::make_unique<KernelResolver>(
      source->store_.get(), source->scheduler_.get());
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
  return resolver_->Finish(
      pending, absl::Now() + absl::Seconds(options_.timeout_seconds),
      /*metadata_only=*/false);
}

absl::Status EmbeddedSource::Prefetch(
    const std::vector<v1::KernelRequest>& requests,
    const PrefetchCallback& progress) {
  std::vector<const v1::KernelRequest*> items;
  items.reserve(requests.size());
  for (const v1::KernelRequest& request : requests) items.push_back(&request);
  absl::Status first_error;
  RunPrefetch(*resolver_, limits_, items,
              absl::Now() + absl::Seconds(options_.timeout_seconds),
              [&](const v1::PrefetchProgress& message) {
                if (first_error.ok()) first_error = PrefetchItemStatus(message);
                if (progress) progress(message);
                return true;
              });
  return first_error;
}

}  // namespace hummingd::client
