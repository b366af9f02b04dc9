#include "server/daemon.h"

#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "cache/kernel_store.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "server/compile_scheduler.h"
#include "server/kernel_resolver.h"
#include "server/kernel_service.h"
#include "server/socket_path.h"

namespace hummingd {
namespace {

// A KernelSet with a few cubins must fit; anything beyond is a broken client.
constexpr int kMaxSendMessageBytes = 256 << 20;
// Requests are small: a Prefetch of a model's few hundred layers takes tens
// of KiB, and kMaxPrefetchItems items at every string's length limit
// (proto_convert.cc) under 8 MiB. A larger bound only lets one request make
// the daemon allocate more (Prefetch begins every item before it waits on
// any).
constexpr int kMaxReceiveMessageBytes = 8 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(
    const ServerConfig& config) {
  RETURN_IF_ERROR(ValidateConfig(config));
  std::unique_ptr<Daemon> daemon(new Daemon());
  daemon->config_ = config;

  RocksStoreOptions store_options;
  store_options.directory = config.cache_dir;
  store_options.max_bytes = config.max_cache_bytes;
  store_options.memory_tier_bytes = config.memory_cache_bytes;
  store_options.min_free_disk_bytes = config.min_free_disk_bytes;
  ASSIGN_OR_RETURN(daemon->store_, OpenRocksStore(store_options));

  CompileSchedulerOptions pool_options;
  pool_options.threads = EffectiveCompileThreads(config);
  pool_options.negative_ttl = absl::Seconds(config.negative_cache_seconds);
  pool_options.max_queued = config.max_queued_compiles;
  daemon->scheduler_ = std::make_unique<CompileScheduler>(pool_options);
  daemon->resolver_ = std::make_unique<KernelResolver>(
      daemon->store_.get(), daemon->scheduler_.get());
  RequestLimits limits;
  limits.shape.max_weight_elements = config.max_weight_elements;
  daemon->service_ = std::make_unique<KernelServiceImpl>(
      daemon->store_.get(), daemon->scheduler_.get(), daemon->resolver_.get(),
      limits, /*memo_bytes=*/config.memory_cache_bytes / 4);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(kMaxReceiveMessageBytes);
  builder.SetMaxSendMessageSize(kMaxSendMessageBytes);
  if (!config.socket_path.empty()) {
    RETURN_IF_ERROR(PrepareSocketPath(config.socket_path));
    builder.AddListeningPort(absl::StrCat("unix:", config.socket_path),
                             grpc::InsecureServerCredentials());
  }
  int tcp_port = 0;
  if (!config.listen_address.empty()) {
    builder.AddListeningPort(config.listen_address,
                             grpc::InsecureServerCredentials(), &tcp_port);
  }
  builder.RegisterService(daemon->service_.get());
  daemon->server_ = builder.BuildAndStart();
  if (daemon->server_ == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "cannot serve on ",
        config.socket_path.empty() ? ""
                                   : absl::StrCat("unix:", config.socket_path),
        config.listen_address.empty()
            ? ""
            : absl::StrCat(" ", config.listen_address),
        " (address in use or not permitted?)"));
  }
  if (!config.listen_address.empty() && tcp_port == 0) {
    return absl::UnavailableError(
        absl::StrCat("--listen: cannot bind ", config.listen_address));
  }
  if (!config.socket_path.empty()) {
    unsigned mode = 0;
    RETURN_IF_ERROR(ParseSocketMode(config.socket_mode, &mode));
    RETURN_IF_ERROR(SetSocketMode(config.socket_path, mode));
  }
  log::Info(absl::StrCat("event=serving socket=", config.socket_path,
                         " tcp_port=", tcp_port,
                         " cache_dir=", config.cache_dir,
                         " compile_threads=", pool_options.threads));
  return daemon;
}

void Daemon::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  log::Info("event=shutdown phase=drain");
  // Prefetch work nobody waits for in the foreground is dropped at once;
  // foreground requests get the grace period; whatever is still queued after
  // it is cancelled so that no handler waits on work that will never start.
  scheduler_->CancelQueued(/*prefetch_only=*/true);
  // gRPC's Shutdown returns only once every callback call has finished, and
  // a GetKernels call finishes only when its compiles do: cancelling the
  // queue after Shutdown returns would run the whole queue first. So the
  // queue is cancelled when the grace period ends, while Shutdown waits.
  const absl::Duration grace = absl::Seconds(config_.shutdown_grace_seconds);
  absl::Notification drained;
  std::thread cancel_at_deadline([this, grace, &drained] {
    if (!drained.WaitForNotificationWithTimeout(grace)) {
      log::Info("event=shutdown phase=cancel_queued");
      scheduler_->CancelQueued();
    }
  });
  server_->Shutdown(std::chrono::system_clock::now() +
                    absl::ToChronoSeconds(grace));
  drained.Notify();
  cancel_at_deadline.join();
  // The cancels above also closed the queue (prefetch, then everything), so
  // this only catches what raced them.
  scheduler_->CancelQueued();
  server_->Wait();
}

Daemon::~Daemon() {
  if (server_ != nullptr) Shutdown();
  // The scheduler goes first after the server: its destructor joins the
  // compile threads, and a compile still running (a prefetch nobody waits
  // for) stores through the resolver and the store, which must outlive it.
  server_.reset();
  scheduler_.reset();
  service_.reset();
  resolver_.reset();
  store_.reset();
  log::Info("event=shutdown phase=closed");
}

}  // namespace hummingd
