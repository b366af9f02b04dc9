// Malformed and invalid requests get INVALID_ARGUMENT naming the field, and
// leave the daemon serving.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "gtest/gtest.h"
#include "tests/integration/daemon_test_util.h"

namespace hummingd::testing {
namespace {

class RequestValidationTest : public DaemonTest {};

struct BadRequestCase {
  std::string description;
  std::function<void(v1::GetKernelsRequest*)> mutate;
  std::string field;  // must appear in the error message
};

std::vector<BadRequestCase> BadRequestCases() {
  using R = v1::GetKernelsRequest;
  auto spec_text = [](const std::string& text) {
    return
        [text](R* r) { r->mutable_request()->mutable_spec()->set_text(text); };
  };
  return {
      {"no family", [](R* r) { r->mutable_request()->clear_family(); },
       "request.family"},
      {"no spec", [](R* r) { r->mutable_request()->clear_spec(); },
       "request.spec"},
      {"no shape", [](R* r) { r->mutable_request()->clear_shape(); },
       "request.shape"},
      {"no arch",
       [](R* r) { r->mutable_request()->mutable_gpu()->clear_arch(); },
       "request.gpu.arch"},
      {"unknown arch",
       [](R* r) { r->mutable_request()->mutable_gpu()->set_arch("sm_61"); },
       "gpu.arch"},
      {"zero n", [](R* r) { r->mutable_request()->mutable_shape()->set_n(0); },
       "shape.n"},
      {"negative k",
       [](R* r) { r->mutable_request()->mutable_shape()->set_k(-128); },
       "shape.k"},
      {"k not a multiple of the group",
       [](R* r) { r->mutable_request()->mutable_shape()->set_k(4096 + 64); },
       "shape.k"},
      {"absurd size",
       [](R* r) {
         r->mutable_request()->mutable_shape()->set_n(int64_t{1} << 20);
         r->mutable_request()->mutable_shape()->set_k(int64_t{1} << 20);
       },
       "N*K"},
      {"group size not a power of two",
       spec_text("weight=uint4,group=100,scale=fp16,act=fp16,out=fp16"),
       "group_size"},
      {"unknown spec key", spec_text("weight=uint4,colour=blue"), "colour"},
      {"weight bits out of range",
       spec_text("weight=uint9,group=128,scale=fp16,act=fp16,out=fp16"),
       "weight"},
      {"float zero point with fp8 activations",
       spec_text("weight=uint4,group=128,scale=fp16,zero=float,act=e4m3,"
                 "act_scale=token,out=fp16"),
       "zero"},
      {"weight wider than activation",
       spec_text("weight=uint8,group=128,scale=fp16,act=int4,act_scale=token,"
                 "out=fp16"),
       "weight"},
      {"text and structured spec together",
       [](R* r) { r->mutable_request()->mutable_spec()->set_group_size(128); },
       "request.spec"},
      {"structured spec with unset weight kind",
       [](R* r) {
         r->mutable_request()->mutable_spec()->clear_text();
         r->mutable_request()->mutable_spec()->set_group_size(128);
       },
       "request.spec.weight.kind"},
      {"launch ABI newer than the daemon",
       [](R* r) { r->mutable_request()->set_launch_abi(7); },
       "request.launch_abi: 7 is newer than this daemon"},
      // Echoed whole, a 20 KB arch overflowed the client's metadata limit
      // and the status arrived as RESOURCE_EXHAUSTED.
      {"arch of 20000 characters",
       [](R* r) {
         r->mutable_request()->mutable_gpu()->set_arch(std::string(20000, 'x'));
       },
       "request.gpu.arch"},
      {"spec text of 20000 characters", spec_text(std::string(20000, 'w')),
       "request.spec.text"},
  };
}

TEST_F(RequestValidationTest, InvalidRequestsNameTheFieldAndChangeNothing) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  for (const BadRequestCase& bad : BadRequestCases()) {
    v1::GetKernelsRequest request = DequantRequest(4096, 4096);
    bad.mutate(&request);
    v1::GetKernelsResponse response;
    grpc::Status status = Get(*stub, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << bad.description << ": " << status.error_message();
    EXPECT_NE(status.error_message().find(bad.field), std::string::npos)
        << bad.description << ": message '" << status.error_message()
        << "' does not name " << bad.field;
  }
  EXPECT_EQ(Counter(*stub, "compiles"), 0);
  EXPECT_EQ(Counter(*stub, "entries"), 0);
  EXPECT_EQ(Counter(*stub, "invalid_requests"),
            static_cast<int64_t>(BadRequestCases().size()));

  // The daemon is unaffected: a good request still works.
  v1::GetKernelsResponse response;
  ASSERT_TRUE(Get(*stub, DequantRequest(4096, 4096), &response).ok());
  EXPECT_EQ(response.kernel_set().kernels_size(), 1);
}

TEST_F(RequestValidationTest, UndecodableBytesAreRejectedAndDaemonSurvives) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  grpc::GenericStub generic(daemon->Channel());
  const std::string garbage("\xff\xff\xff\xff\x0f\x12\x99garbage", 14);
  grpc::Slice slice(garbage);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  grpc::Status status;
  generic.UnaryCall(&context, "/hummingd.v1.KernelService/GetKernels",
                    grpc::StubOptions(), &request, &response,
                    [&](grpc::Status s) {
                      std::lock_guard<std::mutex> lock(mutex);
                      status = std::move(s);
                      done = true;
                      done_cv.notify_all();
                    });
  {
    std::unique_lock<std::mutex> lock(mutex);
    done_cv.wait(lock, [&] { return done; });
  }
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << status.error_message();

  auto stub = daemon->Stub();
  v1::GetKernelsResponse good;
  ASSERT_TRUE(Get(*stub, DequantRequest(1024, 1024), &good).ok());
}

TEST_F(RequestValidationTest, UnimplementedFamilyIsAClearError) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  // Dense GEMMs are planned; MoE GEMMs are not yet.
  v1::GetKernelsRequest request = DequantRequest(4096, 4096);
  request.mutable_request()->set_family(v1::KERNEL_FAMILY_GEMM);
  v1::GemmShape* shape = request.mutable_request()->mutable_shape();
  shape->set_kind(v1::GEMM_KIND_MOE_INDEXED);
  shape->set_experts(8);
  shape->set_top_k(2);
  v1::GetKernelsResponse response;
  grpc::Status status = Get(*stub, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED)
      << status.error_message();
  EXPECT_NE(status.error_message().find("shape.kind"), std::string::npos)
      << status.error_message();
}

// Prefetch parses and begins every item before waiting on any, so the item
// count bounds what one request can make the daemon allocate.
TEST_F(RequestValidationTest, PrefetchWithTooManyItemsIsRefused) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  v1::PrefetchRequest prefetch;
  for (int i = 0; i < 4097; ++i) {
    *prefetch.add_requests() = DequantRequest(4096, 4096).request();
  }
  const PrefetchResult result = Prefetch(*stub, prefetch);
  const grpc::Status& status = result.status;
  const size_t reported = result.progress.size();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << status.error_message();
  EXPECT_NE(status.error_message().find(
                "request.requests: at most 4096 items (got 4097)"),
            std::string::npos)
      << status.error_message();
  EXPECT_EQ(reported, 0);
  EXPECT_EQ(Counter(*stub, "compiles"), 0);
  EXPECT_EQ(Counter(*stub, "invalid_requests"), 1);
}

// Requests are small (a Prefetch of 4096 layers is well under 1 MiB);
// responses carrying cubins may be large, requests may not.
TEST_F(RequestValidationTest, OversizeRequestMessagesAreRefused) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  v1::PrefetchRequest prefetch;
  v1::KernelRequest* item = prefetch.add_requests();
  *item = DequantRequest(4096, 4096).request();
  item->set_name(std::string(16 << 20, 'n'));
  const grpc::Status status = Prefetch(*stub, prefetch, 60).status;
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << status.error_message();
  EXPECT_EQ(Counter(*stub, "prefetch_items"), 0);

  // The daemon goes on serving.
  v1::GetKernelsResponse response;
  ASSERT_TRUE(Get(*stub, DequantRequest(1024, 1024), &response).ok());
}

}  // namespace
}  // namespace hummingd::testing
