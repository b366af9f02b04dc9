// Quantize-from-float on a real GPU: the hummingd_quantize kernel writes the
// same bytes as ReferenceQuantize (weights, scales, zero points, secondary
// scales) for every weight kind, zero kind, scale dtype and granularity.

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/hashing.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "kernels/codegen.h"
#include "kernels/gpu_target.h"
#include "kernels/nvrtc_compiler.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"
#include "kernels/reference/dequant_reference.h"
#include "kernels/reference/format_reference.h"
#include "kernels/reference/quantize_reference.h"
#include "pack/quantize_args.cuh"
#include "tests/gpu/gpu_test_support.h"

namespace hummingd::gpu::testing {
namespace {

struct QuantizeCase {
  const char* spec;
  int64_t n;
  int64_t k;
};

void PrintTo(const QuantizeCase& c, std::ostream* os) {
  *os << c.spec << " n=" << c.n << " k=" << c.k;
}

constexpr QuantizeCase kCases[] = {
    {"weight=uint4,group=128,scale=fp16", 256, 1024},
    {"weight=uint1,group=16,scale=fp16", 48, 64},
    {"weight=uint3,group=16,scale=fp16,zero=int", 40, 96},
    {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16", 64, 512},
    {"weight=uint4,group=64,scale=fp16,zero=float", 24, 256},
    {"weight=uint8,group=channel,scale=e4m3,scale2=channel", 33, 160},
    {"weight=uint7,group=tensor,scale=fp32,scale2=tensor", 17, 96},
    {"weight=int4,group=32,scale=bf16,act=bf16", 64, 256},
    {"weight=int5,group=16x16,scale=e5m2", 64, 96},
    {"weight=e4m3,group=128x128,scale=fp32,act=bf16", 256, 384},
    {"weight=e2m1,group=16,scale=e4m3,scale2=tensor", 128, 256},
    {"weight=e2m1,group=32,scale=ue8m0,act=bf16", 90, 2880},
    {"weight=e3m2,group=32,scale=fp16", 56, 224},
};

absl::StatusOr<v1::KernelSet> ResolveQuantize(const KernelRequest& request,
                                              const std::string& arch) {
  ASSIGN_OR_RETURN(const PlanEntry entry, PlanQuantize(request));
  ASSIGN_OR_RETURN(const KernelSource source,
                   GenerateStub(request, entry.config));
  ASSIGN_OR_RETURN(const CompiledKernel cubin,
                   CompileKernel(source, request.gpu));
  v1::KernelSet set;
  set.set_canonical_spec(FormatSpecText(request.spec));
  set.set_plan_key(Sha256Hex(
      absl::StrCat("test-quantize-plan|", set.canonical_spec(), "|",
                   request.shape.n, "|", request.shape.k, "|", arch)));
  v1::Kernel* kernel = set.add_kernels();
  kernel->set_cubin(cubin.cubin);
  kernel->set_m_min(entry.m_min);
  kernel->set_m_max(entry.m_max);
  kernel->set_artifact_key(Sha256Hex(absl::StrCat(
      "test-quantize-artifact|", set.plan_key(), "|", CodegenHash())));
  kernel->set_entry(cubin.entry);
  kernel->set_cubin_checksum(Checksum64(cubin.cubin));
  v1::LaunchParams* launch = kernel->mutable_launch();
  launch->set_block_x(entry.launch.block_x);
  launch->set_grid_x(entry.launch.grid_x);
  launch->set_grid_y(entry.launch.grid_y);
  launch->set_grid_z(entry.launch.grid_z);
  launch->set_m_per_block_x(entry.launch.m_per_block_x);
  launch->set_dynamic_shared_memory(entry.launch.dynamic_shared_memory);
  kernel->set_threads_per_block(entry.config.threads_per_block);
  kernel->set_dynamic_shared_memory(entry.config.dynamic_shared_memory);
  kernel->set_arch(arch);
  kernel->set_toolchain(Toolchain().Identity());
  kernel->set_config(entry.config.text);
  kernel->set_compile_ms(cubin.compile_ms);
  kernel->set_registers(-1);
  return set;
}

class QuantizeGpuTest : public ::testing::TestWithParam<QuantizeCase> {};

TEST_P(QuantizeGpuTest, QuantizeMatchesReferenceByteForByte) {
  HUMMINGD_REQUIRE_GPU();
  const QuantizeCase& c = GetParam();
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::string arch = TestArch(TestDevice());
  absl::StatusOr<QuantSpec> spec = ParseSpecText(c.spec);
  ASSERT_TRUE(spec.ok()) << spec.status();
  KernelRequest request;
  request.spec = Canonicalize(*spec);
  request.shape.n = c.n;
  request.shape.k = c.k;
  absl::StatusOr<GpuTarget> gpu = ParseGpuArch(arch);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  request.gpu = *gpu;
  absl::StatusOr<v1::KernelSet> set = ResolveQuantize(request, arch);
  ASSERT_TRUE(set.ok()) << set.status();
  ArtifactCache cache;
  absl::StatusOr<std::unique_ptr<LoadedKernelSet>> loaded =
      LoadedKernelSet::Load(*set, cache);
  ASSERT_TRUE(loaded.ok()) << loaded.status();

  // Input in the activation dtype; the reference sees the same values.
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const int64_t count = c.n * c.k;
  std::vector<uint16_t> input(count);
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    const float v = unit(rng) * std::ldexp(1.0f, static_cast<int>(i % 7) - 3);
    input[i] = static_cast<uint16_t>(
        ReferenceEncodeFloat(v, request.spec.activation_type));
    values[i] = ReferenceDecodeScale(request.spec.activation_type, input[i]);
  }
  absl::StatusOr<DequantInputs> expected =
      ReferenceQuantize(request.spec, request.shape, values);
  ASSERT_TRUE(expected.ok()) << expected.status();

  DeviceBuffer d_input, d_weights, d_scales, d_zeros, d_secondary;
  ASSERT_TRUE(d_input.Allocate(input.size() * 2, input.data()).ok());
  ASSERT_TRUE(d_weights.Allocate(expected->weights.size() * 4).ok());
  ASSERT_TRUE(d_scales.Allocate(expected->scales.size()).ok());
  ASSERT_TRUE(d_zeros.Allocate(expected->zero_points.size()).ok());
  ASSERT_TRUE(d_secondary.Allocate(expected->secondary_scales.size() * 4).ok());
  for (DeviceBuffer* b : {&d_weights, &d_scales, &d_zeros, &d_secondary}) {
    if (b->bytes() > 0) {
      ASSERT_TRUE(b->Fill(0xA5).ok());  // poison: every byte must be written
    }
  }
  QuantizeArgs args;
  args.input = reinterpret_cast<const void*>(d_input.get());
  args.weights = reinterpret_cast<device::u32*>(d_weights.get());
  args.scales = reinterpret_cast<void*>(d_scales.get());
  args.zero_points = reinterpret_cast<void*>(d_zeros.get());
  args.secondary_scale = reinterpret_cast<float*>(d_secondary.get());
  ASSERT_TRUE(
      LaunchKernel(**loaded, (*loaded)->kernels().front(), 1, &args, nullptr)
          .ok());
  ASSERT_TRUE(
      CudaCheck((*loaded)->driver().cuCtxSynchronize(), "cuCtxSynchronize")
          .ok());

  std::vector<uint32_t> weights(expected->weights.size());
  std::vector<uint8_t> scales(expected->scales.size());
  std::vector<uint8_t> zeros(expected->zero_points.size());
  std::vector<float> secondary(expected->secondary_scales.size());
  ASSERT_TRUE(d_weights.Download(weights.data(), weights.size() * 4).ok());
  ASSERT_TRUE(d_scales.Download(scales.data(), scales.size()).ok());
  ASSERT_TRUE(d_zeros.Download(zeros.data(), zeros.size()).ok());
  ASSERT_TRUE(
      d_secondary.Download(secondary.data(), secondary.size() * 4).ok());
  int64_t word_mismatches = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    word_mismatches += weights[i] != expected->weights[i];
  }
  EXPECT_EQ(word_mismatches, 0) << "of " << weights.size() << " words";
  EXPECT_EQ(scales, expected->scales);
  EXPECT_EQ(zeros, expected->zero_points);
  EXPECT_EQ(secondary, expected->secondary_scales);
}

INSTANTIATE_TEST_SUITE_P(Formats, QuantizeGpuTest, ::testing::ValuesIn(kCases));

}  // namespace
}  // namespace hummingd::gpu::testing
