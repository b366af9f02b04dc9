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

// The same, with reconnect backoff capped at `max_reconnect_backoff_ms`: a
// long-lived client (the SDK) must notice a restarted daemon within moments,
// not after gRPC's default backoff of up to two minutes.
std::shared_ptr<grpc::Channel> OpenDaemonChannel(const std::string& socket_path,
                                                 int max_reconnect_backoff_ms);

}  // namespace hummingd
