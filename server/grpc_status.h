#pragma once

// absl::Status <-> grpc::Status: the one place the two meet.

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace hummingd {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace hummingd
