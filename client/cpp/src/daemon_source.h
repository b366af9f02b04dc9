#pragma once

// DaemonSource: kernel sets from the node daemon over its unix socket, with a
// deadline per call and one retry across a daemon restart.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "client/cpp/src/kernel_source.h"
#include "grpcpp/channel.h"

namespace hummingd::client {

struct DaemonSourceOptions {
  std::string socket_path;  // resolved already (no "" here)
  int timeout_seconds = 600;
  int reconnect_wait_ms = 5000;
};

class DaemonSource : public KernelSource {
 public:
  explicit DaemonSource(const DaemonSourceOptions& options);

  // The daemon's health service says SERVING within `timeout_ms`; else
  // UNAVAILABLE naming the socket.
  absl::Status CheckHealth(int timeout_ms) const;

  absl::StatusOr<v1::KernelSet> Resolve(
      const v1::KernelRequest& request) override;
  absl::Status Prefetch(const std::vector<v1::KernelRequest>& requests,
                        const PrefetchCallback& progress) override;
  std::string Describe() const override;

 private:
  // After an UNAVAILABLE: true once the channel is connected again (within
  // reconnect_wait_ms).
  bool AwaitReconnect() const;
  // `status` with the socket named when the daemon is unreachable.
  absl::Status Annotate(const absl::Status& status) const;

  const DaemonSourceOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace hummingd::client
