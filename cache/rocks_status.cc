#include "cache/rocks_status.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cache/absl_view.h"

namespace hummingd::cache_internal {
namespace {

// RocksDB reports a held LOCK file as an IOError: "While lock file: <dir>/LOCK:
// Resource temporarily unavailable" from another process, "lock hold by
// current process" from this one. Neither has a dedicated subcode.
bool IsLockHeld(const rocksdb::Status& status) {
  if (!status.IsIOError()) return false;
  const std::string text = status.ToString();
  return absl::StrContains(text, "While lock file") ||
         absl::StrContains(text, "lock hold by current process") ||
         (absl::StrContains(text, "/LOCK") &&
          absl::StrContains(text, "temporarily unavailable"));
}

}  // namespace

absl::Status FromRocksStatus(const rocksdb::Status& status,
                             std::string_view operation,
                             std::string_view directory) {
  if (status.ok()) return absl::OkStatus();
  if (IsLockHeld(status)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cache dir ", ToAbsl(directory),
        " is locked by another process (is another hummingd running on it?)"));
  }
  const std::string message =
      absl::StrCat("cache ", ToAbsl(operation), " in ", ToAbsl(directory),
                   ": rocksdb: ", status.ToString());
  if (status.IsNotFound()) return absl::NotFoundError(message);
  if (status.IsCorruption()) return absl::DataLossError(message);
  if (status.IsNoSpace()) return absl::ResourceExhaustedError(message);
  if (status.IsIOError()) return absl::UnavailableError(message);
  if (status.IsBusy() || status.IsTimedOut() || status.IsTryAgain() ||
      status.IsShutdownInProgress()) {
    return absl::UnavailableError(message);
  }
  if (status.IsAborted()) return absl::AbortedError(message);
  if (status.IsNotSupported()) return absl::FailedPreconditionError(message);
  // InvalidArgument and the rest: our options or calls, never client input.
  return absl::InternalError(message);
}

}  // namespace hummingd::cache_internal
