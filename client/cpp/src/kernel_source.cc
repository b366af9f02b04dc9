#include "client/cpp/src/kernel_source.h"

#include "absl/strings/str_cat.h"

namespace hummingd::client {

absl::Status PrefetchItemStatus(const v1::PrefetchProgress& progress) {
  if (progress.status_code() == 0) return absl::OkStatus();
  return absl::Status(
      static_cast<absl::StatusCode>(progress.status_code()),
      absl::StrCat("prefetch item ", progress.index(),
                   progress.name().empty()
                       ? ""
                       : absl::StrCat(" (", progress.name(), ")"),
                   ": ", progress.status_message()));
}

}  // namespace hummingd::client
