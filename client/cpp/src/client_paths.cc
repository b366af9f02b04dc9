#include "client/cpp/src/client_paths.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace hummingd::client {
namespace {

const char* NonEmptyEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

absl::StatusOr<std::string> ResolveEmbeddedCacheDir(
    const std::string& explicit_dir) {
  if (!explicit_dir.empty()) return explicit_dir;
  if (const char* dir = NonEmptyEnv("HUMMINGD_CACHE_DIR"))
    return std::string(dir);
  if (const char* xdg = NonEmptyEnv("XDG_CACHE_HOME")) {
    return absl::StrCat(xdg, "/hummingd");
  }
  if (const char* home = NonEmptyEnv("HOME")) {
    return absl::StrCat(home, "/.cache/hummingd");
  }
  return absl::FailedPreconditionError(
      "embedded_cache_dir: not set, and none of HUMMINGD_CACHE_DIR, "
      "XDG_CACHE_HOME, HOME is set to derive it from");
}

}  // namespace hummingd::client
