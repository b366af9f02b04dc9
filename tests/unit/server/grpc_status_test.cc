#include "server/grpc_status.h"

#include <string>

#include "gtest/gtest.h"

namespace hummingd {
namespace {

TEST(GrpcStatusTest, CodeAndShortMessagePassUnchanged) {
  grpc::Status converted =
      ToGrpcStatus(absl::InvalidArgumentError("request.shape.k: must be > 0"));
  EXPECT_EQ(converted.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(converted.error_message(), "request.shape.k: must be > 0");
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
}

// The message travels in the trailing metadata; one past gRPC's metadata
// limit replaced the status with RESOURCE_EXHAUSTED on the client's side.
TEST(GrpcStatusTest, LongMessagesAreClippedAndSaySo) {
  const std::string head = "request.spec.text: unknown key '";
  const std::string message = head + std::string(20000, 'x') + "'";
  grpc::Status converted = ToGrpcStatus(absl::InvalidArgumentError(message));
  EXPECT_EQ(converted.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LE(converted.error_message().size(), kMaxGrpcStatusMessageBytes);
  EXPECT_GT(converted.error_message().size(), kMaxGrpcStatusMessageBytes / 2);
  EXPECT_EQ(converted.error_message().rfind(head, 0), 0u)
      << converted.error_message();
  EXPECT_NE(converted.error_message().find("clipped"), std::string::npos)
      << converted.error_message();
}

}  // namespace
}  // namespace hummingd
