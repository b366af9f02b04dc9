#pragma once

// hummingctl's commands, each a function from parsed arguments to an exit
// code, writing human-readable output. Spellings are a public interface
// (README "hummingctl"): scripts rely on them.

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "grpcpp/channel.h"

namespace hummingd {

struct CtlContext {
  std::shared_ptr<grpc::Channel> channel;
  std::string socket_path;
  int timeout_seconds = 600;
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
};

// `args` are the command's own arguments (after the command word).
int RunGetCommand(const CtlContext& context,
                  const std::vector<std::string>& args);
int RunPrefetchCommand(const CtlContext& context,
                       const std::vector<std::string>& args);
int RunStatsCommand(const CtlContext& context,
                    const std::vector<std::string>& args);
int RunListCommand(const CtlContext& context,
                   const std::vector<std::string>& args);
int RunEvictCommand(const CtlContext& context,
                    const std::vector<std::string>& args);
int RunHealthCommand(const CtlContext& context,
                     const std::vector<std::string>& args);

}  // namespace hummingd
