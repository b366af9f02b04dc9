#pragma once

// Where the client looks when the options leave a path empty: environment,
// then the documented defaults. Read once, at KernelClient::Create.

#include <string>

#include "absl/status/statusor.h"

namespace hummingd::client {

// `explicit_dir`, else $HUMMINGD_CACHE_DIR, else $XDG_CACHE_HOME/hummingd,
// else $HOME/.cache/hummingd; FAILED_PRECONDITION when none is set.
absl::StatusOr<std::string> ResolveEmbeddedCacheDir(
    const std::string& explicit_dir);

}  // namespace hummingd::client
