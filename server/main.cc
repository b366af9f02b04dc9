// hummingd: parses flags, prints the config table, runs the daemon until
// SIGTERM/SIGINT. All logic lives in hummingd_server.

#include <signal.h>

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/flag_spelling.h"
#include "common/logging.h"
#include "server/config.h"
#include "server/daemon.h"

namespace {
const hummingd::ServerConfig kDefaults;
}  // namespace

ABSL_FLAG(std::string, socket, kDefaults.socket_path,
          "unix socket to serve on");
ABSL_FLAG(std::string, socket_mode, kDefaults.socket_mode,
          "octal permissions of the socket file");
ABSL_FLAG(std::string, listen, "", "optional TCP HOST:PORT to serve on");
ABSL_FLAG(std::string, cache_dir, kDefaults.cache_dir,
          "RocksDB directory of the kernel cache");
ABSL_FLAG(int, compile_threads, kDefaults.compile_threads,
          "NVRTC compile pool size (0 = number of cores)");
ABSL_FLAG(int64_t, max_cache_bytes, kDefaults.max_cache_bytes,
          "bound on stored artifact bytes (LRU eviction)");
ABSL_FLAG(int64_t, min_free_disk_bytes, kDefaults.min_free_disk_bytes,
          "cache writes stop (kernels are still served) below this free space");
ABSL_FLAG(int64_t, memory_cache_bytes, kDefaults.memory_cache_bytes,
          "in-memory front tier size in bytes");
ABSL_FLAG(int64_t, max_weight_elements, kDefaults.max_weight_elements,
          "largest N*K a request may ask for");
ABSL_FLAG(int, negative_cache_seconds, kDefaults.negative_cache_seconds,
          "how long a failed compile is remembered");
ABSL_FLAG(int, shutdown_grace_seconds, kDefaults.shutdown_grace_seconds,
          "how long SIGTERM waits for in-flight requests");
ABSL_FLAG(int, max_queued_compiles, kDefaults.max_queued_compiles,
          "compile queue bound");
ABSL_FLAG(std::string, log_level, kDefaults.log_level,
          "debug, info, warn or error");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "hummingd [--flagfile FILE] --socket PATH --cache-dir DIR [flags]\n"
      "Flags take dashes or underscores on the command line (flag files: "
      "underscores only); they apply in order, a --flagfile where it stands, "
      "so the last value wins. The daemon's flags:");
  // --help lists this file's flags (Abseil's default matches files named
  // after the binary, and this one is main.cc).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server/main.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  // Block the shutdown signals before any thread starts so that only the
  // sigwait below ever sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  hummingd::NormalizeFlagSpelling(argc, argv);
  absl::ParseCommandLine(argc, argv);
  hummingd::ServerConfig config;
  config.socket_path = absl::GetFlag(FLAGS_socket);
  config.socket_mode = absl::GetFlag(FLAGS_socket_mode);
  config.listen_address = absl::GetFlag(FLAGS_listen);
  config.cache_dir = absl::GetFlag(FLAGS_cache_dir);
  config.compile_threads = absl::GetFlag(FLAGS_compile_threads);
  config.max_cache_bytes = absl::GetFlag(FLAGS_max_cache_bytes);
  config.memory_cache_bytes = absl::GetFlag(FLAGS_memory_cache_bytes);
  config.min_free_disk_bytes = absl::GetFlag(FLAGS_min_free_disk_bytes);
  config.max_weight_elements = absl::GetFlag(FLAGS_max_weight_elements);
  config.negative_cache_seconds = absl::GetFlag(FLAGS_negative_cache_seconds);
  config.shutdown_grace_seconds = absl::GetFlag(FLAGS_shutdown_grace_seconds);
  config.max_queued_compiles = absl::GetFlag(FLAGS_max_queued_compiles);
  config.log_level = absl::GetFlag(FLAGS_log_level);

  if (absl::Status valid = hummingd::ValidateConfig(config); !valid.ok()) {
    std::fprintf(stderr, "hummingd: %s\n",
                 std::string(valid.message()).c_str());
    return 2;
  }
  // The table is printed before the level applies: an operator needs it to
  // know how the daemon runs whatever the level, warn and error included.
  for (const hummingd::ConfigRow& row : hummingd::DescribeConfig(config)) {
    hummingd::log::Info(absl::StrCat("config ", row.name, "=", row.value,
                                     " default=", row.default_value,
                                     " range=", row.range, " # ", row.help));
  }
  hummingd::log::Level level;
  hummingd::log::ParseLevel(config.log_level, &level);
  hummingd::log::SetLevel(level);

  auto daemon = hummingd::Daemon::Start(config);
  if (!daemon.ok()) {
    hummingd::log::Error(absl::StrCat("event=startup_failed error=\"",
                                      daemon.status().message(), "\""));
    std::fprintf(stderr, "hummingd: %s\n",
                 std::string(daemon.status().message()).c_str());
    return 1;
  }
  int received = 0;
  sigwait(&signals, &received);
  hummingd::log::Info(absl::StrCat("event=signal signal=", received));
  (*daemon)->Shutdown();
  daemon->reset();
  return 0;
}
