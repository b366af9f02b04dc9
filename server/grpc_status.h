#pragma once

// absl::Status <-> grpc::Status: the one place the two meet.

#include <cstddef>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace hummingd {

// Longest status message sent to a client. The message travels in the
// trailing metadata, and one past the client's metadata limit replaces the
// whole status with RESOURCE_EXHAUSTED; longer ones are clipped.
inline constexpr size_t kMaxGrpcStatusMessageBytes = 1024;

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace hummingd
