// KernelClient::Create picks the source; the client memoizes what it
// resolves so that a layer costs one round trip per process.

#include "hummingd/kernel_client.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/cpp/src/client_paths.h"
#include "client/cpp/src/daemon_source.h"
#include "client/cpp/src/embedded_source.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "ctl/daemon_channel.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "kernels/launch_abi.h"

namespace hummingd::client {
namespace {

// The request as this library sends it: with the launch ABI its
// launchers pass when the caller left launch_abi unset (0, which would ask
// for the oldest ABI's kernels).
v1::KernelRequest WithLaunchAbi(const v1::KernelRequest& request) {
  v1::KernelRequest stamped = request;
  if (stamped.launch_abi() == 0) stamped.set_launch_abi(kCurrentLaunchAbi);
  return stamped;
}

// The request's identity: everything but the log label (launch_abi
// included: different layouts may get different plans).
std::string MemoKey(const v1::KernelRequest& request) {
  v1::KernelRequest unnamed = request;
  unnamed.clear_name();
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    unnamed.SerializeToCodedStream(&coded);
  }
  return bytes;
}

class KernelClientImpl : public KernelClient {
 public:
  KernelClientImpl(ResolveMode mode, std::unique_ptr<KernelSource> source)
      : mode_(mode), source_(std::move(source)) {}

  ResolveMode mode() const override { return mode_; }

  absl::StatusOr<std::shared_ptr<const v1::KernelSet>> Resolve(
      const v1::KernelRequest& unstamped) override {
    const v1::KernelRequest request = WithLaunchAbi(unstamped);
    std::string key = MemoKey(request);
    {
      absl::MutexLock lock(&mutex_);
      auto it = memo_.find(key);
      if (it != memo_.end()) return it->second;
    }
    // Resolved without the lock: the sources are thread-safe and already
    // single-flight identical compiles.
    ASSIGN_OR_RETURN(v1::KernelSet set, source_->Resolve(request));
    auto shared = std::make_shared<const v1::KernelSet>(std::move(set));
    absl::MutexLock lock(&mutex_);
    return memo_.try_emplace(std::move(key), std::move(shared)).first->second;
  }

  absl::Status Prefetch(const std::vector<v1::KernelRequest>& requests,
                        const std::function<void(const v1::PrefetchProgress&)>&
                            progress) override {
    std::vector<v1::KernelRequest> stamped;
    stamped.reserve(requests.size());
    for (const v1::KernelRequest& request : requests) {
      stamped.push_back(WithLaunchAbi(request));
    }
    return source_->Prefetch(stamped, progress);
  }

 private:
  const ResolveMode mode_;
  const std::unique_ptr<KernelSource> source_;
  absl::Mutex mutex_;
  absl::flat_hash_map<std::string, std::shared_ptr<const v1::KernelSet>> memo_
      ABSL_GUARDED_BY(mutex_);
};

absl::Status ValidateOptions(const ClientOptions& options) {
  const std::pair<const char*, int> positive[] = {
      {"timeout_seconds", options.timeout_seconds},
      {"connect_timeout_ms", options.connect_timeout_ms},
      {"reconnect_wait_ms", options.reconnect_wait_ms}};
  for (const auto& [name, value] : positive) {
    if (value <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("options.", name, ": must be > 0 (got ", value, ")"));
    }
  }
  if (options.embedded_compile_threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.embedded_compile_threads: must be >= 0 (got ",
                     options.embedded_compile_threads, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<KernelSource>> OpenEmbedded(
    const ClientOptions& options) {
  EmbeddedSourceOptions embedded;
  ASSIGN_OR_RETURN(embedded.cache_dir,
                   ResolveEmbeddedCacheDir(options.embedded_cache_dir));
  embedded.compile_threads = options.embedded_compile_threads;
  embedded.timeout_seconds = options.timeout_seconds;
  ASSIGN_OR_RETURN(std::unique_ptr<EmbeddedSource> source,
                   EmbeddedSource::Open(embedded));
  return std::unique_ptr<KernelSource>(std::move(source));
}

}  // namespace

absl::StatusOr<std::unique_ptr<KernelClient>> KernelClient::Create(
    const ClientOptions& options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  if (options.mode == ResolveMode::kEmbedded) {
    ASSIGN_OR_RETURN(std::unique_ptr<KernelSource> source,
                     OpenEmbedded(options));
    return std::make_unique<KernelClientImpl>(ResolveMode::kEmbedded,
                                              std::move(source));
  }

  DaemonSourceOptions daemon_options;
  daemon_options.socket_path = ResolveSocketPath(options.socket_path);
  daemon_options.timeout_seconds = options.timeout_seconds;
  daemon_options.reconnect_wait_ms = options.reconnect_wait_ms;
  auto daemon = std::make_unique<DaemonSource>(daemon_options);
  absl::Status health = daemon->CheckHealth(options.connect_timeout_ms);
  if (health.ok()) {
    if (options.mode == ResolveMode::kAuto) {
      log::Info(absl::StrCat("event=client_mode mode=daemon socket=",
                             daemon_options.socket_path));
    }
    return std::make_unique<KernelClientImpl>(ResolveMode::kDaemon,
                                              std::move(daemon));
  }
  if (options.mode == ResolveMode::kDaemon) return health;

  ASSIGN_OR_RETURN(std::unique_ptr<KernelSource> source, OpenEmbedded(options));
  log::Info(absl::StrCat("event=client_mode mode=embedded ", source->Describe(),
                         " reason=\"", health.message(), "\""));
  return std::make_unique<KernelClientImpl>(ResolveMode::kEmbedded,
                                            std::move(source));
}

}  // namespace hummingd::client
