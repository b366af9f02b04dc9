#pragma once

// Debian's Abseil is built with its own absl::string_view (not an alias of
// std::string_view), so hash-map lookups and StrCat need an explicit bridge.
// This one copies nothing.

#include <string_view>

#include "absl/strings/string_view.h"

namespace hummingd::cache_internal {

inline absl::string_view ToAbsl(std::string_view view) {
  return absl::string_view(view.data(), view.size());
}

}  // namespace hummingd::cache_internal
