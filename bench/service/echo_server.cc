#include "bench/service/echo_server.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"
#include "bench/service/echo.grpc.pb.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"

namespace hummingd::bench {
namespace {

// Same bound as the daemon's server.
constexpr int kMaxMessageBytes = 256 << 20;

int VarintBytes(uint64_t value) {
  int bytes = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++bytes;
  }
  return bytes;
}

// Non-zero, varied bytes, like a cubin.
std::string MakePayload(int64_t bytes) {
  std::string payload(static_cast<size_t>(bytes), '\0');
  for (size_t i = 0; i < payload.size(); ++i) {
    payload[i] = static_cast<char>((i * 2654435761u) >> 13);
  }
  return payload;
}

// The cheapest server gRPC allows: the same API as the daemon's GetKernels
// (raw callback method), answering with a response serialized once up front,
// so each call only shares the response's slices.
class EchoServiceImpl final
    : public EchoService::WithRawCallbackMethod_Echo<EchoService::Service> {
 public:
  explicit EchoServiceImpl(int64_t payload_bytes) {
    EchoResponse response;
    response.set_payload(MakePayload(payload_bytes));
    grpc::Slice slice(response.SerializeAsString());
    response_ = grpc::ByteBuffer(&slice, 1);
  }

  grpc::ServerUnaryReactor* Echo(grpc::CallbackServerContext* context,
                                 const grpc::ByteBuffer* request,
                                 grpc::ByteBuffer* response) override {
    *response = response_;
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

 private:
  grpc::ByteBuffer response_;
};

}  // namespace

int64_t EchoPayloadForMessageBytes(int64_t message_bytes) {
  for (int64_t payload = message_bytes - 1; payload >= 0; --payload) {
    // The first fit from above; exact unless a varint length boundary
    // makes `message_bytes` unreachable.
    if (1 + VarintBytes(payload) + payload <= message_bytes) return payload;
  }
  return 0;
}

int RunEchoServer(const std::string& socket_path, int64_t payload_bytes) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  unlink(socket_path.c_str());
  EchoServiceImpl service(payload_bytes);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.AddListeningPort(absl::StrCat("unix:", socket_path),
                           grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    std::fprintf(stderr, "echo server: cannot serve on unix:%s\n",
                 socket_path.c_str());
    return 1;
  }
  std::fprintf(stderr, "echo server: serving unix:%s payload_bytes=%lld\n",
               socket_path.c_str(), static_cast<long long>(payload_bytes));
  int received = 0;
  sigwait(&signals, &received);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server->Wait();
  unlink(socket_path.c_str());
  return 0;
}

}  // namespace hummingd::bench
