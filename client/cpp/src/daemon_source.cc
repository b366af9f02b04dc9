#include "client/cpp/src/daemon_source.h"

#include <sys/stat.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "ctl/daemon_channel.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "hummingd/v1/kernel_service.grpc.pb.h"
#include "server/grpc_status.h"

namespace hummingd::client {
namespace {

// Connecting to a local socket is cheap, so the SDK reconnects eagerly and
// lets go of the connection soon after its last call (workers resolve at
// load time and then stay silent; see DaemonChannelTuning).
DaemonChannelTuning ChannelTuning() {
  DaemonChannelTuning tuning;
  tuning.max_reconnect_backoff_ms = 250;
  tuning.idle_timeout_ms = 1000;
  return tuning;
}

std::chrono::system_clock::time_point After(std::chrono::milliseconds delay) {
  return std::chrono::system_clock::now() + delay;
}

}  // namespace

DaemonSource::DaemonSource(const DaemonSourceOptions& options)
    : options_(options),
      channel_(OpenDaemonChannel(options.socket_path, ChannelTuning())) {}

std::string DaemonSource::Describe() const {
  return absl::StrCat("daemon socket=", options_.socket_path);
}

absl::Status DaemonSource::Annotate(const absl::Status& status) const {
  if (status.code() != absl::StatusCode::kUnavailable) return status;
  return absl::UnavailableError(absl::StrCat("hummingd daemon unreachable at ",
                                             options_.socket_path, ": ",
                                             status.message()));
}

absl::Status DaemonSource::CheckHealth(int timeout_ms) const {
  // Without a socket file there is nothing to wait for.
  struct stat info;
  if (stat(options_.socket_path.c_str(), &info) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "hummingd daemon unreachable at ", options_.socket_path,
        ": no such socket (is hummingd running? set HUMMINGD_SOCKET or the "
        "socket path)"));
  }
  auto stub = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext context;
  context.set_deadline(After(std::chrono::milliseconds(timeout_ms)));
  context.set_wait_for_ready(true);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status =
      stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  if (!status.ok()) {
    return absl::UnavailableError(
        absl::StrCat("hummingd daemon unreachable at ", options_.socket_path,
                     ": health check failed within ", timeout_ms,
                     " ms: ", status.error_message()));
  }
  if (response.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
    return absl::UnavailableError(absl::StrCat(
        "hummingd daemon at ", options_.socket_path, " is not serving"));
  }
  return absl::OkStatus();
}

bool DaemonSource::AwaitReconnect() const {
  return channel_->WaitForConnected(
      After(std::chrono::milliseconds(options_.reconnect_wait_ms)));
}

absl::StatusOr<v1::KernelSet> DaemonSource::Resolve(
    const v1::KernelRequest& request) {
  v1::GetKernelsRequest rpc_request;
  *rpc_request.mutable_request() = request;
  auto stub = v1::KernelService::NewStub(channel_);
  // GetKernels is idempotent, so a call that found the daemon gone (restart)
  // is retried once after the channel reconnects.
  for (int attempt = 0;; ++attempt) {
    grpc::ClientContext context;
    context.set_deadline(After(std::chrono::seconds(options_.timeout_seconds)));
    context.set_wait_for_ready(attempt > 0);
    v1::GetKernelsResponse response;
    grpc::Status status = stub->GetKernels(&context, rpc_request, &response);
    if (status.ok()) return std::move(*response.mutable_kernel_set());
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE || attempt > 0 ||
        !AwaitReconnect()) {
      return Annotate(FromGrpcStatus(status));
    }
    log::Warn(absl::StrCat("event=daemon_reconnected socket=",
                           options_.socket_path, " retry=get_kernels"));
  }
}

absl::Status DaemonSource::Prefetch(
    const std::vector<v1::KernelRequest>& requests,
    const PrefetchCallback& progress) {
  v1::PrefetchRequest rpc_request;
  for (const v1::KernelRequest& request : requests) {
    *rpc_request.add_requests() = request;
  }
  auto stub = v1::KernelService::NewStub(channel_);
  for (int attempt = 0;; ++attempt) {
    grpc::ClientContext context;
    context.set_deadline(After(std::chrono::seconds(options_.timeout_seconds)));
    context.set_wait_for_ready(attempt > 0);
    auto reader = stub->Prefetch(&context, rpc_request);
    absl::Status first_error;
    int received = 0;
    v1::PrefetchProgress message;
    while (reader->Read(&message)) {
      ++received;
      if (first_error.ok()) first_error = PrefetchItemStatus(message);
      if (progress) progress(message);
    }
    grpc::Status status = reader->Finish();
    if (status.ok()) return first_error;
    // Only a stream that never started is safe to replay without showing the
    // caller an item twice.
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE || received > 0 ||
        attempt > 0 || !AwaitReconnect()) {
      return Annotate(FromGrpcStatus(status));
    }
    log::Warn(absl::StrCat("event=daemon_reconnected socket=",
                           options_.socket_path, " retry=prefetch"));
  }
}

}  // namespace hummingd::client
