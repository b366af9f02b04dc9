#include "server/proto_convert.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/launch_abi.h"

namespace hummingd {
namespace {

v1::KernelRequest TextRequest(const std::string& spec) {
  v1::KernelRequest request;
  request.set_family(v1::KERNEL_FAMILY_DEQUANT);
  request.mutable_spec()->set_text(spec);
  request.mutable_shape()->set_n(4096);
  request.mutable_shape()->set_k(4096);
  request.mutable_gpu()->set_arch("sm_90a");
  return request;
}

TEST(ProtoConvertTest, TextAndStructuredFormsAgree) {
  const std::string text =
      "weight=uint4,group=64,scale=bf16,zero=int,act=bf16,out=bf16";
  auto from_text = KernelRequestFromProto(TextRequest(text), RequestLimits());
  ASSERT_TRUE(from_text.ok()) << from_text.status();
  // Round trip through the structured wire form.
  v1::KernelRequest structured = KernelRequestToProto(*from_text);
  auto from_structured = KernelRequestFromProto(structured, RequestLimits());
  ASSERT_TRUE(from_structured.ok()) << from_structured.status();
  EXPECT_EQ(from_structured->spec, from_text->spec);
  EXPECT_EQ(from_structured->shape, from_text->shape);
  EXPECT_EQ(from_structured->gpu.ArchName(), "sm_90a");
  EXPECT_EQ(from_text->spec.group_size, 64);
  EXPECT_EQ(from_text->spec.zero_point, ZeroPointKind::kInteger);
}

TEST(ProtoConvertTest, ErrorsNameTheRequestField) {
  struct Case {
    void (*mutate)(v1::KernelRequest*);
    const char* field;
  };
  const Case cases[] = {
      {[](v1::KernelRequest* r) { r->clear_family(); }, "request.family"},
      {[](v1::KernelRequest* r) { r->clear_spec(); }, "request.spec"},
      {[](v1::KernelRequest* r) { r->mutable_gpu()->set_arch(""); },
       "request.gpu.arch"},
      {[](v1::KernelRequest* r) { r->mutable_gpu()->set_arch("sm_52"); },
       "request.gpu.arch"},
      {[](v1::KernelRequest* r) { r->mutable_gpu()->set_sm_count(-1); },
       "request.gpu.sm_count"},
      {[](v1::KernelRequest* r) { r->mutable_shape()->set_k(100); },
       "request.shape.k"},
      {[](v1::KernelRequest* r) { r->mutable_spec()->set_text("weight=x"); },
       "request.spec.text"},
      {[](v1::KernelRequest* r) {
         r->mutable_spec()->set_scale_type(v1::DATA_TYPE_FP16);
       },
       "request.spec"},
      {[](v1::KernelRequest* r) {
         r->mutable_spec()->clear_text();
         r->mutable_spec()->mutable_weight()->set_kind(v1::WEIGHT_KIND_UINT);
         r->mutable_spec()->mutable_weight()->set_bits(4);
         r->mutable_spec()->set_granularity(v1::SCALE_GRANULARITY_GROUP);
         r->mutable_spec()->set_group_size(128);
         r->mutable_spec()->set_activation_type(v1::DATA_TYPE_FP16);
         r->mutable_spec()->set_output_type(v1::DATA_TYPE_FP16);
         // scale_type left unset
       },
       "request.spec.scale_type"},
      // Client strings are bounded before anything echoes them: a 20 KB
      // arch in an error message overflowed gRPC's metadata limit and turned
      // INVALID_ARGUMENT into RESOURCE_EXHAUSTED.
      {[](v1::KernelRequest* r) {
         r->mutable_gpu()->set_arch(std::string(20000, 'x'));
       },
       "request.gpu.arch: at most"},
      {[](v1::KernelRequest* r) {
         r->mutable_spec()->set_text(std::string(20000, 'w'));
       },
       "request.spec.text: at most"},
      {[](v1::KernelRequest* r) {
         r->mutable_gpu()->set_device_name(std::string(20000, 'd'));
       },
       "request.gpu.device_name: at most"},
      {[](v1::KernelRequest* r) { r->set_name(std::string(20000, 'n')); },
       "request.name: at most"},
      // Hardware figures out of any real GPU's range: 1 byte of opt-in
      // shared memory made the planner report a negative byte count.
      {[](v1::KernelRequest* r) {
         r->mutable_gpu()->set_max_shared_memory_per_block_optin(1);
       },
       "request.gpu.max_shared_memory_per_block_optin"},
      {[](v1::KernelRequest* r) {
         r->mutable_gpu()->set_max_shared_memory_per_block_optin(4 << 20);
       },
       "request.gpu.max_shared_memory_per_block_optin"},
      {[](v1::KernelRequest* r) { r->mutable_gpu()->set_sm_count(100000); },
       "request.gpu.sm_count"},
  };
  for (const Case& c : cases) {
    v1::KernelRequest request =
        TextRequest("weight=uint4,group=128,scale=fp16,act=fp16,out=fp16");
    c.mutate(&request);
    auto result = KernelRequestFromProto(request, RequestLimits());
    ASSERT_FALSE(result.ok()) << c.field;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find(c.field), std::string::npos)
        << "'" << result.status().message() << "' should name " << c.field;
  }
}

// The figures real GPUs report pass: unknown (0) and an H100's.
TEST(ProtoConvertTest, RealGpuFiguresPass) {
  v1::KernelRequest request =
      TextRequest("weight=uint4,group=128,scale=fp16,act=fp16,out=fp16");
  request.mutable_gpu()->set_device_name("NVIDIA H100 80GB HBM3");
  auto unknown = KernelRequestFromProto(request, RequestLimits());
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_EQ(unknown->gpu.sm_count, 0);
  request.mutable_gpu()->set_sm_count(132);
  request.mutable_gpu()->set_max_shared_memory_per_block_optin(232448);
  auto h100 = KernelRequestFromProto(request, RequestLimits());
  ASSERT_TRUE(h100.ok()) << h100.status();
  EXPECT_EQ(h100->gpu.sm_count, 132);
  EXPECT_EQ(h100->gpu.max_shared_memory_per_block_optin, 232448);
  EXPECT_EQ(h100->gpu.device_name, "NVIDIA H100 80GB HBM3");
}

// launch_abi: absent is the original layout (clients before the field),
// the value survives both directions, and one newer than the daemon's is
// refused naming the field and both values.
TEST(ProtoConvertTest, LaunchAbiRoundTripsAndNewerIsRefused) {
  v1::KernelRequest request =
      TextRequest("weight=uint4,group=128,scale=fp16,act=fp16,out=fp16");
  request.set_family(v1::KERNEL_FAMILY_GEMM);
  auto absent = KernelRequestFromProto(request, RequestLimits());
  ASSERT_TRUE(absent.ok()) << absent.status();
  EXPECT_EQ(absent->launch_abi, kLaunchAbiOriginal);
  EXPECT_EQ(KernelRequestToProto(*absent).launch_abi(), kLaunchAbiOriginal);

  request.set_launch_abi(kCurrentLaunchAbi);
  auto current = KernelRequestFromProto(request, RequestLimits());
  ASSERT_TRUE(current.ok()) << current.status();
  EXPECT_EQ(current->launch_abi, kCurrentLaunchAbi);
  const v1::KernelRequest back = KernelRequestToProto(*current);
  EXPECT_EQ(back.launch_abi(), kCurrentLaunchAbi);
  auto again = KernelRequestFromProto(back, RequestLimits());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->launch_abi, kCurrentLaunchAbi);

  request.set_launch_abi(kCurrentLaunchAbi + 6);
  auto newer = KernelRequestFromProto(request, RequestLimits());
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      newer.status().message(),
      absl::StrCat("request.launch_abi: ", kCurrentLaunchAbi + 6,
                   " is newer than this daemon (", kCurrentLaunchAbi, ")"));
}

// max_m: absent is 0 (every range); any value survives both directions,
// and none is refused (one past the plan's last range keeps every range).
TEST(ProtoConvertTest, MaxMRoundTrips) {
  v1::KernelRequest request =
      TextRequest("weight=uint4,group=128,scale=fp16,act=fp16,out=fp16");
  request.set_family(v1::KERNEL_FAMILY_GEMM);
  auto absent = KernelRequestFromProto(request, RequestLimits());
  ASSERT_TRUE(absent.ok()) << absent.status();
  EXPECT_EQ(absent->max_m, 0u);
  EXPECT_EQ(KernelRequestToProto(*absent).max_m(), 0u);

  for (uint32_t max_m : {1u, 8u, 64u, 4294967295u}) {
    request.set_max_m(max_m);
    auto parsed = KernelRequestFromProto(request, RequestLimits());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->max_m, max_m);
    const v1::KernelRequest back = KernelRequestToProto(*parsed);
    EXPECT_EQ(back.max_m(), max_m);
    auto again = KernelRequestFromProto(back, RequestLimits());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->max_m, max_m);
  }
}

TEST(ProtoConvertTest, WeightCapComesFromLimits) {
  RequestLimits limits;
  limits.shape.max_weight_elements = 4096 * 4095;
  auto result = KernelRequestFromProto(
      TextRequest("weight=uint4,group=128,scale=fp16,act=fp16,out=fp16"),
      limits);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hummingd
