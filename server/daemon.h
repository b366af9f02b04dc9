#pragma once

// Daemon: owns the store, the compile pool, the resolver and the gRPC server,
// in that construction order and the reverse destruction order, so that a
// shutdown drains requests before the pool stops and closes RocksDB last.

#include <memory>

#include "absl/status/statusor.h"
#include "grpcpp/server.h"
#include "server/config.h"

namespace hummingd {

class KernelStore;
class CompileScheduler;
class KernelResolver;
class KernelServiceImpl;

class Daemon {
 public:
  // Opens the cache, starts the pool and serves. FAILED_PRECONDITION when
  // the cache dir or the socket belongs to another live daemon.
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(
      const ServerConfig& config);
  ~Daemon();

  // Stops accepting, waits up to shutdown_grace_seconds for in-flight
  // requests, then cancels the rest. Idempotent.
  void Shutdown();

 private:
  Daemon() = default;

  ServerConfig config_;
  std::unique_ptr<KernelStore> store_;
  std::unique_ptr<CompileScheduler> scheduler_;
  std::unique_ptr<KernelResolver> resolver_;
  std::unique_ptr<KernelServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  bool shut_down_ = false;
};

}  // namespace hummingd
