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

std::shared_ptr<grpc::Channel> OpenDaemonChannel(const std::string& socket_path,
                                                 int max_reconnect_backoff_ms) {
  grpc::ChannelArguments arguments = DaemonChannelArguments();
  const int initial = std::min(100, max_reconnect_backoff_ms);
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, initial);
  arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, initial);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, max_reconnect_backoff_ms);
  return grpc::CreateCustomChannel(absl::StrCat("unix:", socket_path),
                                   grpc::InsecureChannelCredentials(),
                                   arguments);
}

}  // namespace hummingd
