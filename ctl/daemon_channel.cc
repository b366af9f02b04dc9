#include "ctl/daemon_channel.h"

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

std::shared_ptr<grpc::Channel> OpenDaemonChannel(
    const std::string& socket_path) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(256 << 20);
  arguments.SetMaxSendMessageSize(256 << 20);
  return grpc::CreateCustomChannel(absl::StrCat("unix:", socket_path),
                                   grpc::InsecureChannelCredentials(),
                                   arguments);
}

}  // namespace hummingd
