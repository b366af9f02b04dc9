#include "server/proto_convert.h"

#include "gtest/gtest.h"

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
