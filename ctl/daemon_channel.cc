#include "ctl/daemon_channel.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace hummingd {

std::string ResolveSocketPath(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("HUMMINGD_SOCKET"); env && *env) {
    return env;
  }
  return kDefaultSocketPath;
}

namespace {

grpc::ChannelArguments DaemonChannelArguments() {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(256 << 20);
  arguments.SetMaxSendMessageSize(256 << 20);
  return arguments;
}

}  // namespace

std::shared_ptr<grpc::Channel> OpenDaemonChannel(
    const std::string& socket_path) {
  return grpc::CreateCustomChannel(absl::StrCat("unix:", socket_path),
                                   grpc::InsecureChannelCredentials(),
                                   DaemonChannelArguments());
}

std::shared_ptr<grpc::Channel> OpenDaemonChannel(
    const std::string& socket_path, const DaemonChannelTuning& tuning) {
  grpc::ChannelArguments arguments = DaemonChannelArguments();
  if (tuning.max_reconnect_backoff_ms > 0) {
    const int initial = std::min(100, tuning.max_reconnect_backoff_ms);
    arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, initial);
    arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, initial);
    arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
                     tuning.max_reconnect_backoff_ms);
  }
  if (tuning.idle_timeout_ms > 0) {
    arguments.SetInt(GRPC_ARG_CLIENT_IDLE_TIMEOUT_MS, tuning.idle_timeout_ms);
  }
  return grpc::CreateCustomChannel(absl::StrCat("unix:", socket_path),
                                   grpc::InsecureChannelCredentials(),
                                   arguments);
}

}  // namespace hummingd
