#include "server/grpc_status.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace hummingd {
namespace {

// Keeps the head of a long message (where the field and the rule are) and
// says how long the whole was, cutting at a UTF-8 character boundary.
std::string ClippedMessage(absl::string_view message) {
  if (message.size() <= kMaxGrpcStatusMessageBytes) return std::string(message);
  const std::string tail =
      absl::StrCat("... [clipped from ", message.size(), " bytes]");
  size_t keep = kMaxGrpcStatusMessageBytes - tail.size();
  while (keep > 0 &&
         (static_cast<unsigned char>(message[keep]) & 0xC0) == 0x80) {
    --keep;
  }
  return absl::StrCat(message.substr(0, keep), tail);
}

}  // namespace

// Both enumerate google.rpc.Code, so codes map one to one.
grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      ClippedMessage(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

}  // namespace hummingd
