// Dequantize on a real GPU: every format, scale dtype, granularity,
// secondary scale and output type, bit-exact against the CPU reference.

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/gpu/dequantize.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "tests/gpu/dequant_inputs.h"
#include "tests/gpu/gemm_support.h"
#include "tests/gpu/gpu_test_support.h"

namespace hummingd::gpu::testing {
namespace {

// Runs everywhere: without a driver or device the answer is a clear
// FAILED_PRECONDITION, never a crash.
TEST(CudaDriverTest, NoGpuIsFailedPreconditionElseADevice) {
  absl::StatusOr<CudaDevice> device = UseDevice(0);
  if (device.ok()) {
    EXPECT_GE(device->sm, 75);
    EXPECT_GT(device->sm_count, 0);
    EXPECT_FALSE(device->name.empty());
    return;
  }
  EXPECT_EQ(device.status().code(), absl::StatusCode::kFailedPrecondition)
      << device.status();
  EXPECT_FALSE(device.status().message().empty());
  ArtifactCache cache;
  v1::KernelSet set;
  absl::StatusOr<std::unique_ptr<LoadedKernelSet>> loaded =
      LoadedKernelSet::Load(set, cache);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition)
      << loaded.status();
}

TEST(CudaDriverTest, ErrorsConvertWithTheirName) {
  HUMMINGD_REQUIRE_GPU();
  absl::Status status = CudaStatus(CUDA_ERROR_INVALID_VALUE, "cuTest");
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_NE(status.message().find("CUDA_ERROR_INVALID_VALUE"),
            std::string::npos)
      << status;
  EXPECT_EQ(CudaStatus(CUDA_ERROR_NO_DEVICE, "cuTest").code(),
            absl::StatusCode::kFailedPrecondition);
}

struct DequantCase {
  const char* spec;
  int64_t n;
  int64_t k;
};

void PrintTo(const DequantCase& c, std::ostream* os) {
  *os << c.spec << " n=" << c.n << " k=" << c.k;
}

// Every weight format, scale dtype, granularity, zero kind, secondary kind
// and output type appears at least once; shapes include the smallest legal
// one (16 x 32) and odd multiples.
constexpr DequantCase kCases[] = {
    {"weight=uint1,group=32,scale=fp16", 16, 32},
    {"weight=uint2,group=64,scale=bf16,out=bf16", 48, 192},
    {"weight=uint3,group=32,scale=fp32", 24, 96},
    {"weight=uint4,group=128,scale=fp16", 256, 512},
    {"weight=uint4,group=128,scale=fp16", 1024, 4096},
    {"weight=uint5,group=16,scale=fp16,scale2=channel", 40, 160},
    {"weight=uint6,group=channel,scale=e4m3", 72, 224},
    {"weight=uint7,group=tensor,scale=fp32,scale2=tensor", 17, 96},
    {"weight=uint8,group=128,scale=ue8m0,out=bf16", 33, 384},
    {"weight=uint4,group=128,scale=fp16,zero=int", 136, 384},
    {"weight=uint8,group=64,scale=bf16,zero=int,act=bf16,out=bf16", 50, 320},
    {"weight=uint4,group=64,scale=e5m2,zero=int", 16, 64},
    {"weight=uint4,group=128,scale=fp16,zero=float", 64, 256},
    {"weight=uint4,group=32,scale=bf16,zero=float,act=bf16,out=bf16,"
     "scale2=channel",
     96, 224},
    {"weight=uint4,group=128x128,scale=fp32,zero=int", 256, 384},
    {"weight=uint4,group=16,scale=bf16,scale2=channel,out=bf16", 32, 64},
    {"weight=uint4,group=channel,scale=ue8m0,scale2=channel", 24, 128},
    {"weight=int4,group=128,scale=fp16", 128, 640},
    {"weight=int4,group=channel,scale=bf16,out=bf16", 23, 96},
    {"weight=int8,group=channel,scale=fp32,scale2=tensor", 64, 96},
    {"weight=int8,group=tensor,scale=e5m2", 16, 32},
    {"weight=e4m3,group=128x128,scale=fp32,act=bf16,out=bf16", 384, 256},
    {"weight=e4m3,group=channel,scale=fp32,scale2=tensor", 80, 160},
    {"weight=e4m3,group=128,scale=e4m3,scale2=channel", 32, 256},
    {"weight=e5m2,group=tensor,scale=fp16", 48, 64},
    {"weight=e5m2,group=128,scale=bf16,out=bf16", 96, 384},
    {"weight=e2m1,group=16,scale=e4m3,scale2=tensor", 128, 256},
    {"weight=e2m1,group=32,scale=ue8m0,out=bf16", 90, 2880},
    {"weight=e3m2,group=32,scale=ue8m0", 56, 224},
    {"weight=e2m3,group=32,scale=e5m2,scale2=channel", 40, 96},
    {"weight=e2m3,group=32x64,scale=bf16,out=bf16", 128, 96},
};

class DequantBitExactTest : public ::testing::TestWithParam<DequantCase> {};

TEST_P(DequantBitExactTest, MatchesReferenceBitForBit) {
  HUMMINGD_REQUIRE_GPU();
  const DequantCase& c = GetParam();
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  absl::StatusOr<v1::KernelSet> set =
      ResolveDequant(c.spec, c.n, c.k, TestArch(TestDevice()));
  ASSERT_TRUE(set.ok()) << set.status();
  ArtifactCache cache;
  absl::StatusOr<std::unique_ptr<LoadedKernelSet>> loaded =
      LoadedKernelSet::Load(*set, cache);
  ASSERT_TRUE(loaded.ok()) << loaded.status();

  DeviceDequantLayer layer;
  ASSERT_TRUE(layer.Init(c.spec, c.n, c.k, seed).ok());
  ASSERT_TRUE(Dequantize(**loaded, layer.buffers(), nullptr).ok());
  absl::StatusOr<std::vector<uint16_t>> got = layer.DownloadOutput();
  ASSERT_TRUE(got.ok()) << got.status();
  std::string first_few;
  EXPECT_EQ(layer.CountMismatches(*got, &first_few), 0)
      << "of " << got->size() << " elements:" << first_few;
}

INSTANTIATE_TEST_SUITE_P(Formats, DequantBitExactTest,
                         ::testing::ValuesIn(kCases));

TEST(DequantizeTest, RejectsMissingAndMisalignedBuffers) {
  HUMMINGD_REQUIRE_GPU();
  const char* spec = "weight=uint4,group=64,scale=fp16,zero=int,scale2=tensor";
  absl::StatusOr<v1::KernelSet> set =
      ResolveDequant(spec, 16, 64, TestArch(TestDevice()));
  ASSERT_TRUE(set.ok()) << set.status();
  ArtifactCache cache;
  auto loaded = LoadedKernelSet::Load(*set, cache);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  DeviceDequantLayer layer;
  ASSERT_TRUE(layer.Init(spec, 16, 64, TestSeed()).ok());

  DequantBuffers no_zero = layer.buffers();
  no_zero.zero_points = 0;
  absl::Status status = Dequantize(**loaded, no_zero, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("dequant.zero_points"), std::string::npos)
      << status;

  DequantBuffers no_secondary = layer.buffers();
  no_secondary.secondary_scale = 0;
  status = Dequantize(**loaded, no_secondary, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("dequant.secondary_scale"), std::string::npos)
      << status;

  DequantBuffers misaligned = layer.buffers();
  misaligned.output += 2;
  status = Dequantize(**loaded, misaligned, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("dequant.output: must be 16-byte aligned"),
            std::string::npos)
      << status;

  // Nothing was launched: every output element still holds the poison (the
  // misaligned launch would have started at element 1).
  absl::StatusOr<std::vector<uint16_t>> got = layer.DownloadOutput();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(std::all_of(got->begin(), got->end(),
                          [](uint16_t value) { return value == 0xFFFF; }));
}

TEST(LoaderTest, ChecksumMismatchIsDataLossNamingTheKernel) {
  HUMMINGD_REQUIRE_GPU();
  absl::StatusOr<v1::KernelSet> set = ResolveDequant(
      "weight=uint4,group=128,scale=fp16", 16, 128, TestArch(TestDevice()));
  ASSERT_TRUE(set.ok()) << set.status();
  v1::KernelSet corrupt = *set;
  std::string* cubin = corrupt.mutable_kernels(0)->mutable_cubin();
  (*cubin)[cubin->size() / 2] ^= 0x40;
  ArtifactCache cache;
  auto loaded = LoadedKernelSet::Load(corrupt, cache);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(loaded.status().message().find(set->kernels(0).entry()),
            std::string::npos)
      << loaded.status();
  EXPECT_NE(loaded.status().message().find(
                set->kernels(0).artifact_key().substr(0, 16)),
            std::string::npos)
      << loaded.status();
  EXPECT_EQ(cache.loads(), 0);
}

TEST(LoaderTest, CubinForAnotherArchIsRefusedBeforeTheDriver) {
  HUMMINGD_REQUIRE_GPU();
  const CudaDevice& device = TestDevice();
  // A different major version never runs, whatever this device is.
  const std::string other = device.sm / 10 == 8 ? "sm_90a" : "sm_80";
  absl::StatusOr<v1::KernelSet> set =
      ResolveDequant("weight=uint4,group=128,scale=fp16", 16, 128, other);
  ASSERT_TRUE(set.ok()) << set.status();
  ArtifactCache cache;
  auto loaded = LoadedKernelSet::Load(*set, cache);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(loaded.status().message().find(other), std::string::npos)
      << loaded.status();
  EXPECT_EQ(cache.loads(), 0);
}

// A GEMM set: several M ranges, some sharing an artifact (ranges where only
// the launch differs), so both "once per artifact" and "M picks its range"
// can fail.
TEST(LoaderTest, EachArtifactLoadsOnceAndMPicksItsRange) {
  HUMMINGD_REQUIRE_GPU();
  absl::StatusOr<GemmLayerKernels> kernels =
      ResolveGemm("weight=uint4,group=128,scale=fp16,act=fp16,out=fp16", 4096,
                  4096, TestArch(TestDevice()));
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  const v1::KernelSet& set = kernels->gemm;
  ASSERT_GT(set.kernels_size(), 2);
  std::set<std::string> artifact_keys;
  for (const auto* kernels : {&set.kernels(), &set.prepare()}) {
    for (const v1::Kernel& kernel : *kernels) {
      artifact_keys.insert(kernel.artifact_key());
    }
  }
  ArtifactCache cache;
  auto first = LoadedKernelSet::Load(set, cache);
  ASSERT_TRUE(first.ok()) << first.status();
  const int64_t loads = cache.loads();
  EXPECT_EQ(loads, static_cast<int64_t>(artifact_keys.size()));
  // A second set for the same artifacts, without cubin bytes (as a
  // metadata-only answer would be), is served from the cache.
  v1::KernelSet metadata_only = set;
  for (v1::Kernel& kernel : *metadata_only.mutable_kernels()) {
    kernel.clear_cubin();
  }
  auto second = LoadedKernelSet::Load(metadata_only, cache);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(cache.loads(), loads);
  ASSERT_EQ((*second)->kernels().size(), (*first)->kernels().size());
  for (size_t i = 0; i < (*first)->kernels().size(); ++i) {
    EXPECT_EQ((*second)->kernels()[i].artifact.get(),
              (*first)->kernels()[i].artifact.get());
  }

  const LoadedKernelSet& loaded = **first;
  for (const LoadedKernel& kernel : loaded.kernels()) {
    for (int64_t m : {kernel.m_min, kernel.m_max}) {
      absl::StatusOr<const LoadedKernel*> picked = loaded.ForM(m);
      ASSERT_TRUE(picked.ok()) << picked.status();
      EXPECT_EQ(*picked, &kernel) << "M=" << m;
    }
  }
  EXPECT_EQ(loaded.ForM(0).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(loaded.ForM(loaded.kernels().back().m_max + 1).status().code(),
            absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace hummingd::gpu::testing
