#include "kernels/codegen.h"

#include <string>

#include "gtest/gtest.h"
#include "kernels/plan.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"

namespace hummingd {
namespace {

GpuTarget Gpu(int sm, bool arch_specific = false) {
  GpuTarget gpu;
  gpu.sm = sm;
  gpu.arch_specific = arch_specific;
  return gpu;
}

KernelRequest Request(std::string_view spec_text, int64_t n, int64_t k) {
  KernelRequest request;
  request.family = KernelFamily::kDequant;
  absl::StatusOr<QuantSpec> spec = ParseSpecText(spec_text);
  EXPECT_TRUE(spec.ok()) << spec.status();
  request.spec = Canonicalize(spec.value_or(QuantSpec{}));
  request.shape.n = n;
  request.shape.k = k;
  request.gpu = Gpu(90, true);
  return request;
}

KernelConfig DequantConfig(const KernelRequest& request) {
  return PlanKernels(request).value().entries[0].config;
}

TEST(CodegenTest, DequantStubInstantiatesTheSkeleton) {
  const KernelRequest request = Request(
      "weight=uint4,group=128,scale=fp16,zero=int,out=bf16", 4096, 11008);
  absl::StatusOr<KernelSource> source =
      GenerateStub(request, DequantConfig(request));
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ(source->entry, "hummingd_dequant");
  EXPECT_EQ(source->name, "hummingd_dequant.cu");
  const std::string& text = source->source;
  EXPECT_NE(text.find("#include \"gemm/dequant_kernel.cuh\""),
            std::string::npos);
  EXPECT_NE(text.find("extern \"C\" __global__ void __launch_bounds__(256) "
                      "hummingd_dequant(hummingd::DequantArgs args)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("hd::run_dequant<Config, 256>(args, threadIdx.x, "
                      "blockIdx.x)"),
            std::string::npos);
  EXPECT_NE(text.find("/*kind=*/hd::CodeKind::kUint, /*bits=*/4"),
            std::string::npos);
  EXPECT_NE(text.find("/*scale_block_n=*/1, /*scale_block_k=*/128"),
            std::string::npos);
  EXPECT_NE(text.find("/*zero=*/hd::ZeroKind::kInteger"), std::string::npos);
  EXPECT_NE(text.find("/*output_type=*/hd::ScalarType::kBf16"),
            std::string::npos);
  EXPECT_NE(text.find("/*n=*/4096LL, /*k=*/11008LL"), std::string::npos);
  // The only include is the skeleton.
  EXPECT_EQ(text.find("#include", text.find("#include") + 1),
            std::string::npos);
}

TEST(CodegenTest, StubIsDeterministicAndTracksEveryCompiledField) {
  const KernelRequest base =
      Request("weight=e4m3,group=128x128,scale=fp32", 256, 512);
  const std::string text = GenerateStub(base, DequantConfig(base))->source;
  EXPECT_EQ(GenerateStub(base, DequantConfig(base))->source, text);
  EXPECT_NE(text.find("/*exponent_bits=*/4, /*mantissa_bits=*/3"),
            std::string::npos);
  EXPECT_NE(text.find("hd::ScaleLayout::kBlock, /*scale_block_n=*/128, "
                      "/*scale_block_k=*/128"),
            std::string::npos)
      << text;
  for (const char* other :
       {"weight=e5m2,group=128x128,scale=fp32",
        "weight=e4m3,group=128,scale=fp32",
        "weight=e4m3,group=128x128,scale=bf16",
        "weight=e4m3,group=128x128,scale=fp32,scale2=tensor",
        "weight=e4m3,group=128x128,scale=fp32,out=bf16"}) {
    const KernelRequest changed = Request(other, 256, 512);
    EXPECT_NE(GenerateStub(changed, DequantConfig(changed))->source, text)
        << other;
  }
  const KernelRequest wider =
      Request("weight=e4m3,group=128x128,scale=fp32", 256, 1024);
  EXPECT_NE(GenerateStub(wider, DequantConfig(wider))->source, text);
}

TEST(CodegenTest, FloatZeroPointReadsTheActivationType) {
  const KernelRequest request = Request(
      "weight=uint4,group=64,scale=bf16,zero=float,act=bf16,out=bf16", 64, 128);
  const std::string text =
      GenerateStub(request, DequantConfig(request))->source;
  EXPECT_NE(text.find("/*activation_type=*/hd::ScalarType::kBf16"),
            std::string::npos);
}

TEST(CodegenTest, RefusesWhatItCannotGenerate) {
  KernelRequest request = Request("weight=uint4,group=128,scale=fp16", 64, 128);
  const KernelConfig config = DequantConfig(request);

  // A gemm request with a dequant config names the mismatch.
  KernelRequest gemm = request;
  gemm.family = KernelFamily::kGemm;
  EXPECT_EQ(GenerateStub(gemm, config).status().code(),
            absl::StatusCode::kInvalidArgument);

  KernelConfig wrong_skeleton = config;
  wrong_skeleton.skeleton = "gemm_sm90";
  EXPECT_EQ(GenerateStub(request, wrong_skeleton).status().code(),
            absl::StatusCode::kInvalidArgument);

  KernelConfig odd_threads = config;
  odd_threads.threads_per_block = 100;
  EXPECT_EQ(GenerateStub(request, odd_threads).status().code(),
            absl::StatusCode::kInvalidArgument);

  KernelRequest bad_k = request;
  bad_k.shape.k = 100;
  EXPECT_EQ(GenerateStub(bad_k, config).status().code(),
            absl::StatusCode::kInvalidArgument);

  KernelRequest bad_spec = request;
  bad_spec.spec.group_size = 100;
  absl::Status status = GenerateStub(bad_spec, config).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("spec.group_size"), std::string::npos)
      << status;
}

}  // namespace
}  // namespace hummingd
