#pragma once

// Preparing a unix socket path for a server: make its folder, refuse a path
// that a live server answers on, remove a stale socket left by a crash.

#include <string>

#include "absl/status/status.h"

namespace hummingd {

absl::Status PrepareSocketPath(const std::string& path);
absl::Status SetSocketMode(const std::string& path, unsigned mode);

}  // namespace hummingd
