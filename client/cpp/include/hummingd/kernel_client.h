#pragma once

// KernelClient: how an inference worker gets its kernels. Resolves a layer
// (spec, N, K, GPU) into a KernelSet once — from the node daemon, or
// in-process (embedded mode) when no daemon runs — and memoizes it, so the
// hot path never talks to anyone.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hummingd/v1/kernel_service.pb.h"

namespace hummingd::client {

enum class ResolveMode {
  kDaemon,    // the node daemon; an error if none answers
  kEmbedded,  // compile in-process, cache in a local RocksDB directory
  kAuto,      // daemon if reachable, else embedded (logged once)
};

struct ClientOptions {
  ResolveMode mode = ResolveMode::kAuto;
  // "" = $HUMMINGD_SOCKET, else /run/hummingd/hummingd.sock.
  std::string socket_path;
  // Embedded mode's cache: "" = $HUMMINGD_CACHE_DIR, else
  // $XDG_CACHE_HOME/hummingd, else $HOME/.cache/hummingd. One process per
  // directory (RocksDB's lock).
  std::string embedded_cache_dir;
  int timeout_seconds = 600;     // per resolve call
  int connect_timeout_ms = 500;  // how long kAuto waits for the daemon
  // After a call finds the daemon gone, how long to wait for it to come back
  // (a restart) before retrying that call once.
  int reconnect_wait_ms = 5000;
  int embedded_compile_threads = 0;  // 0 = cores
};

class KernelClient {
 public:
  static absl::StatusOr<std::unique_ptr<KernelClient>> Create(
      const ClientOptions& options);
  virtual ~KernelClient() = default;

  // The mode actually in use (kAuto resolves to one of the other two).
  virtual ResolveMode mode() const = 0;

  // Resolves one request; the result is memoized per request, so calling it
  // again is a map lookup. Errors keep their codes (INVALID_ARGUMENT naming
  // the field, UNAVAILABLE when the daemon is gone and cannot be reached
  // again, …). A daemon restart between calls is survived (reconnect).
  // A request whose launch_abi is 0 (unset) is sent with this library's
  // own (what its QuantizedLinear and LaunchKernel pass to GEMM kernels),
  // so the daemon plans only kernels this client can launch; Prefetch
  // does the same.
  virtual absl::StatusOr<std::shared_ptr<const v1::KernelSet>> Resolve(
      const v1::KernelRequest& request) = 0;

  // Compiles/caches every request of a manifest; `progress` (optional) sees
  // one message per item. Returns the first item error, after all items ran.
  virtual absl::Status Prefetch(
      const std::vector<v1::KernelRequest>& requests,
      const std::function<void(const v1::PrefetchProgress&)>& progress) = 0;
};

}  // namespace hummingd::client
