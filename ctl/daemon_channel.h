#pragma once

// How clients reach the node daemon: an explicit socket path, else
// $HUMMINGD_SOCKET, else the documented default.

#include <memory>
#include <string>

#include "grpcpp/channel.h"

namespace hummingd {

inline constexpr char kDefaultSocketPath[] = "/run/hummingd/hummingd.sock";

// `explicit_path` wins when non-empty.
std::string ResolveSocketPath(const std::string& explicit_path);

// A channel over the unix socket with message limits large enough for
// kernel sets.
std::shared_ptr<grpc::Channel> OpenDaemonChannel(
    const std::string& socket_path);

// For long-lived clients (the SDK); 0 keeps gRPC's default.
struct DaemonChannelTuning {
  // Caps reconnect backoff, so that a restarted daemon is found within
  // moments, not after gRPC's default of up to two minutes.
  int max_reconnect_backoff_ms = 0;
  // Drops the connection after this long without calls. An idle client
  // that keeps its connection holds up the daemon's shutdown drain until
  // gRPC's 5 s backup poller notices the GOAWAY.
  int idle_timeout_ms = 0;
};

// The same with `tuning` applied.
std::shared_ptr<grpc::Channel> OpenDaemonChannel(
    const std::string& socket_path, const DaemonChannelTuning& tuning);

}  // namespace hummingd
