#include "server/config.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace hummingd {
namespace {

absl::Status CheckRange(absl::string_view flag, int64_t value, int64_t low,
                        int64_t high) {
  if (value < low || value > high) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, ": must be in [", low, ", ", high, "] (got ", value, ")"));
  }
  return absl::OkStatus();
}

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kTiB = int64_t{1} << 40;

}  // namespace

std::vector<ConfigRow> DescribeConfig(const ServerConfig& c) {
  const ServerConfig d;
  return {
      {"socket", c.socket_path, d.socket_path, "path",
       "unix socket to serve on (also HUMMINGD_SOCKET for clients)"},
      {"socket-mode", c.socket_mode, d.socket_mode, "octal 0000-0777",
       "permissions of the socket file"},
      {"listen", c.listen_address, "(off)", "HOST:PORT",
       "optional TCP address to serve on as well"},
      {"cache-dir", c.cache_dir, d.cache_dir, "path",
       "RocksDB directory of the kernel cache (one daemon per directory)"},
      {"compile-threads", absl::StrCat(EffectiveCompileThreads(c)),
       "0 (= cores)", "[0, 1024]", "NVRTC compile pool size"},
      {"max-cache-bytes", absl::StrCat(c.max_cache_bytes),
       absl::StrCat(d.max_cache_bytes), "[1 MiB, 16 TiB]",
       "bound on stored artifact bytes; least recently used evicted"},
      {"memory-cache-bytes", absl::StrCat(c.memory_cache_bytes),
       absl::StrCat(d.memory_cache_bytes), "[0, 1 TiB]",
       "in-memory front tier of the cache"},
      {"min-free-disk-bytes", absl::StrCat(c.min_free_disk_bytes),
       absl::StrCat(d.min_free_disk_bytes), "[0, 1 TiB]",
       "cache writes stop (kernels are still served) below this free space"},
      {"max-weight-elements", absl::StrCat(c.max_weight_elements),
       absl::StrCat(d.max_weight_elements), "[1, 2^40]",
       "largest N*K a request may ask for"},
      {"negative-cache-seconds", absl::StrCat(c.negative_cache_seconds),
       absl::StrCat(d.negative_cache_seconds), "[0, 3600]",
       "how long a failed compile is answered from memory"},
      {"shutdown-grace-seconds", absl::StrCat(c.shutdown_grace_seconds),
       absl::StrCat(d.shutdown_grace_seconds), "[0, 600]",
       "how long SIGTERM waits for in-flight requests"},
      {"max-queued-compiles", absl::StrCat(c.max_queued_compiles),
       absl::StrCat(d.max_queued_compiles), "[1, 1000000]",
       "compile queue bound; beyond it requests get RESOURCE_EXHAUSTED"},
      {"log-level", c.log_level, d.log_level, "debug|info|warn|error",
       "log verbosity"},
  };
}

absl::Status ParseSocketMode(const std::string& text, unsigned* mode) {
  if (text.empty() || text.size() > 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--socket-mode: must be an octal mode like 0660 (got '", text, "')"));
  }
  unsigned value = 0;
  for (char c : text) {
    if (c < '0' || c > '7') {
      return absl::InvalidArgumentError(absl::StrCat(
          "--socket-mode: must be an octal mode like 0660 (got '", text, "')"));
    }
    value = value * 8 + static_cast<unsigned>(c - '0');
  }
  *mode = value;
  return absl::OkStatus();
}

absl::Status ValidateConfig(const ServerConfig& c) {
  if (c.socket_path.empty() && c.listen_address.empty()) {
    return absl::InvalidArgumentError(
        "--socket: a socket path or --listen address is required");
  }
  // sockaddr_un.sun_path holds 108 bytes including the terminator.
  if (c.socket_path.size() > 107) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--socket: path is longer than the 107 bytes a unix socket allows (",
        c.socket_path.size(), ")"));
  }
  if (c.cache_dir.empty()) {
    return absl::InvalidArgumentError("--cache-dir: must not be empty");
  }
  unsigned mode = 0;
  if (absl::Status s = ParseSocketMode(c.socket_mode, &mode); !s.ok()) return s;
  if (absl::Status s =
          CheckRange("compile-threads", c.compile_threads, 0, 1024);
      !s.ok())
    return s;
  if (absl::Status s =
          CheckRange("max-cache-bytes", c.max_cache_bytes, kMiB, 16 * kTiB);
      !s.ok())
    return s;
  if (absl::Status s =
          CheckRange("memory-cache-bytes", c.memory_cache_bytes, 0, kTiB);
      !s.ok())
    return s;
  if (absl::Status s = CheckRange("min-free-disk-bytes",
                                  c.min_free_disk_bytes, 0, kTiB);
      !s.ok())
    return s;
  if (absl::Status s = CheckRange("max-weight-elements", c.max_weight_elements,
                                  1, int64_t{1} << 40);
      !s.ok())
    return s;
  if (absl::Status s = CheckRange("negative-cache-seconds",
                                  c.negative_cache_seconds, 0, 3600);
      !s.ok())
    return s;
  if (absl::Status s = CheckRange("shutdown-grace-seconds",
                                  c.shutdown_grace_seconds, 0, 600);
      !s.ok())
    return s;
  if (absl::Status s =
          CheckRange("max-queued-compiles", c.max_queued_compiles, 1, 1000000);
      !s.ok())
    return s;
  log::Level level;
  if (!log::ParseLevel(c.log_level, &level)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--log-level: must be debug, info, warn or error (got '",
                     c.log_level, "')"));
  }
  return absl::OkStatus();
}

int EffectiveCompileThreads(const ServerConfig& config) {
  if (config.compile_threads > 0) return config.compile_threads;
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 ? static_cast<int>(cores) : 1;
}

}  // namespace hummingd
