#pragma once

// The daemon's configuration: one table of name, default, range and help
// (printed at startup), filled from Abseil flags in main.cc.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace hummingd {

struct ServerConfig {
  std::string socket_path = "/run/hummingd/hummingd.sock";
  std::string socket_mode = "0660";  // octal permissions of the socket file
  std::string listen_address;        // optional TCP HOST:PORT, "" = off
  std::string cache_dir = "/var/cache/hummingd";
  int compile_threads = 0;  // 0 = number of cores
  int64_t max_cache_bytes = int64_t{4} << 30;
  int64_t memory_cache_bytes = int64_t{256} << 20;
  int64_t min_free_disk_bytes = int64_t{128} << 20;
  int64_t max_weight_elements = int64_t{1} << 34;
  int negative_cache_seconds = 30;
  int shutdown_grace_seconds = 10;
  int max_queued_compiles = 4096;
  std::string log_level = "info";
};

struct ConfigRow {
  std::string name;
  std::string value;
  std::string default_value;
  std::string range;
  std::string help;
};

// The table, with current values; defaults come from ServerConfig{}.
std::vector<ConfigRow> DescribeConfig(const ServerConfig& config);

// Range checks; INVALID_ARGUMENT naming the flag ("--compile-threads: must be
// in [0, 1024] (got -3)").
absl::Status ValidateConfig(const ServerConfig& config);

// compile_threads with 0 resolved to the core count.
int EffectiveCompileThreads(const ServerConfig& config);

// "0660" -> 0660; INVALID_ARGUMENT on anything else.
absl::Status ParseSocketMode(const std::string& text, unsigned* mode);

}  // namespace hummingd
