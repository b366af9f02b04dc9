#include "kernels/cubin_info.h"

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/gpu_target.h"
#include "kernels/nvrtc_compiler.h"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd {
namespace {

GpuTarget Gpu(int sm, bool arch_specific = false) {
  GpuTarget gpu;
  gpu.sm = sm;
  gpu.arch_specific = arch_specific;
  return gpu;
}

// Two entry points and a device function that stays out of line: only the
// entries are kernels.
constexpr char kTwoKernels[] = R"(
extern "C" __device__ __noinline__ float helper_not_a_kernel(float x) {
  return x * x + 1.0f;
}
extern "C" __global__ void zeta_kernel(float* p) { p[0] = helper_not_a_kernel(p[1]); }
extern "C" __global__ void alpha_kernel(int* p) { p[threadIdx.x] = 7; }
)";

// The cubin of `text` for `arch` (empty, with a test failure, if it does
// not compile).
std::string CompileSource(const char* text, const char* entry,
                          const std::string& arch) {
  KernelSource source;
  source.source = text;
  source.entry = entry;
  source.name = "cubin_info_test.cu";
  absl::StatusOr<GpuTarget> gpu = ParseGpuArch(arch);
  EXPECT_TRUE(gpu.ok()) << gpu.status();
  absl::StatusOr<CompiledKernel> kernel = CompileKernel(source, *gpu);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return kernel.ok() ? kernel->cubin : std::string();
}

std::string CompileFor(const std::string& arch) {
  return CompileSource(kTwoKernels, "alpha_kernel", arch);
}

TEST(CubinInfoTest, ReadsArchAndEntriesOfRealCubins) {
  const struct {
    const char* arch;
    int sm;
    bool arch_specific;
  } kCases[] = {{"sm_75", 75, false},   {"sm_80", 80, false},
                {"sm_86", 86, false},   {"sm_89", 89, false},
                {"sm_90", 90, false},   {"sm_90a", 90, true},
                {"sm_100a", 100, true}, {"sm_120", 120, false}};
  for (const auto& c : kCases) {
    const std::string cubin = CompileFor(c.arch);
    absl::StatusOr<CubinInfo> info = InspectCubin(cubin);
    ASSERT_TRUE(info.ok()) << c.arch << ": " << info.status();
    EXPECT_EQ(info->sm, c.sm) << c.arch;
    EXPECT_EQ(info->arch_specific, c.arch_specific) << c.arch;
    EXPECT_EQ(info->ArchName(), c.arch);
    EXPECT_GE(info->elf_abi_version, 8) << c.arch;
    EXPECT_EQ(info->kernels,
              (std::vector<std::string>{"alpha_kernel", "zeta_kernel"}))
        << c.arch;
    // Register counts of exactly the entry points, in the range a thread
    // can hold (the device function has none of its own).
    ASSERT_EQ(info->registers.size(), 2u) << c.arch;
    for (const std::string& kernel : info->kernels) {
      ASSERT_EQ(info->registers.count(kernel), 1u) << c.arch << " " << kernel;
      EXPECT_GE(info->registers.at(kernel), 2) << c.arch << " " << kernel;
      EXPECT_LE(info->registers.at(kernel), 255) << c.arch << " " << kernel;
    }
  }
}

// The same body built for four 512-thread blocks per SM gets at most 32
// registers, and without that cap more: the counts are the compiler's
// per kernel, not a constant.
TEST(CubinInfoTest, RegisterCountsFollowTheKernel) {
  constexpr char kSource[] = R"(
#define BODY                                                              \
  float r[24];                                                            \
  for (int i = 0; i < 24; ++i) r[i] = in[threadIdx.x + 512 * i];          \
  float acc = 0.0f;                                                       \
  for (int j = 0; j < 24; ++j)                                            \
    for (int i = 0; i < 24; ++i) acc = fmaf(r[i], r[(i + j) % 24], acc); \
  out[threadIdx.x] = acc;
extern "C" __global__ void __launch_bounds__(512, 4)
    capped(const float* in, float* out) { BODY }
extern "C" __global__ void free_running(const float* in, float* out) { BODY }
)";
  absl::StatusOr<CubinInfo> info =
      InspectCubin(CompileSource(kSource, "capped", "sm_90a"));
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_EQ(info->registers.count("capped"), 1u);
  ASSERT_EQ(info->registers.count("free_running"), 1u);
  EXPECT_LE(info->registers.at("capped"), 32);
  EXPECT_GT(info->registers.at("free_running"), info->registers.at("capped"));
}

// A local array indexed at run time lives in the stack frame; a kernel
// without one records a frame of 0 (what GemmCompileTest's no-spill check
// relies on).
TEST(CubinInfoTest, FrameSizesFollowTheKernel) {
  constexpr char kSource[] = R"(
extern "C" __global__ void local_array(const int* in, float* out) {
  // A recurrence, so that the compiler cannot recompute r[k] from in[k].
  float r[64];
  r[0] = static_cast<float>(in[0]);
  for (int i = 1; i < 64; ++i) r[i] = 0.5f * r[i - 1] + in[i];
  out[threadIdx.x] = r[in[threadIdx.x] & 63];
}
extern "C" __global__ void no_frame(const float* in, float* out) {
  out[threadIdx.x] = in[threadIdx.x] * 2.0f;
}
)";
  absl::StatusOr<CubinInfo> info =
      InspectCubin(CompileSource(kSource, "local_array", "sm_90a"));
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_EQ(info->frame_bytes.count("local_array"), 1u);
  ASSERT_EQ(info->frame_bytes.count("no_frame"), 1u);
  EXPECT_GE(info->frame_bytes.at("local_array"), 64 * 4);
  EXPECT_EQ(info->frame_bytes.at("no_frame"), 0);
}

// Static shared memory is the entry's .nv.shared.<name> section: a kernel
// without __shared__ variables has none and records 0. On sm_90 the section
// of a kernel with any starts with the block's 1 KB driver reservation, so
// that its variables' addresses lie past it (the residency check of
// GemmCompileTest relies on both).
TEST(CubinInfoTest, SharedBytesFollowTheKernel) {
  constexpr char kSource[] = R"(
extern "C" __global__ void staged(const float* in, float* out) {
  __shared__ float s_values[300];
  for (int i = threadIdx.x; i < 300; i += blockDim.x) s_values[i] = in[i];
  __syncthreads();
  out[threadIdx.x] = s_values[(threadIdx.x * 7) % 300];
}
extern "C" __global__ void no_shared(const float* in, float* out) {
  out[threadIdx.x] = in[threadIdx.x] * 2.0f;
}
)";
  for (const auto& [arch, reserved] :
       {std::pair<const char*, int>{"sm_80", 0}, {"sm_90a", 1024}}) {
    absl::StatusOr<CubinInfo> info =
        InspectCubin(CompileSource(kSource, "staged", arch));
    ASSERT_TRUE(info.ok()) << arch << ": " << info.status();
    ASSERT_EQ(info->shared_bytes.count("staged"), 1u) << arch;
    ASSERT_EQ(info->shared_bytes.count("no_shared"), 1u) << arch;
    EXPECT_EQ(info->shared_bytes.at("staged"), reserved + 300 * 4) << arch;
    EXPECT_EQ(info->shared_bytes.at("no_shared"), 0) << arch;
    // What a block takes beyond its dynamic bytes and the reservation.
    EXPECT_EQ(KernelStaticSharedBytes(*info, "staged").value_or(-1), 300 * 4)
        << arch;
    EXPECT_EQ(KernelStaticSharedBytes(*info, "no_shared").value_or(-1), 0)
        << arch;
    EXPECT_EQ(KernelStaticSharedBytes(*info, "absent").status().code(),
              absl::StatusCode::kNotFound)
        << arch;
  }
  // An sm_90 section too small to hold the reservation it starts with.
  CubinInfo odd;
  odd.sm = 90;
  odd.shared_bytes["k"] = 512;
  EXPECT_EQ(KernelStaticSharedBytes(odd, "k").status().code(),
            absl::StatusCode::kDataLoss);
  odd.sm = 86;
  EXPECT_EQ(KernelStaticSharedBytes(odd, "k").value_or(-1), 512);
}

TEST(CubinInfoTest, EveryTruncationIsDataLoss) {
  const std::string cubin = CompileFor("sm_80");
  ASSERT_FALSE(cubin.empty());
  ASSERT_TRUE(InspectCubin(cubin).ok());
  for (size_t length = 0; length < cubin.size(); ++length) {
    absl::StatusOr<CubinInfo> info = InspectCubin(cubin.substr(0, length));
    ASSERT_FALSE(info.ok()) << "prefix of " << length << " bytes parsed";
    ASSERT_EQ(info.status().code(), absl::StatusCode::kDataLoss) << length;
  }
  EXPECT_NE(
      InspectCubin(cubin.substr(0, 10)).status().message().find("truncated"),
      std::string::npos);
}

TEST(CubinInfoTest, GarbageAndForeignElfAreDataLoss) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 200; ++i) {
    std::string garbage(64 + rng() % 4096, '\0');
    for (char& c : garbage) c = static_cast<char>(rng());
    EXPECT_EQ(InspectCubin(garbage).status().code(),
              absl::StatusCode::kDataLoss);
  }

  std::string cubin = CompileFor("sm_86");
  ASSERT_FALSE(cubin.empty());
  std::string x86 = cubin;
  x86[18] = 62;  // EM_X86_64
  x86[19] = 0;
  EXPECT_NE(InspectCubin(x86).status().message().find("EM_CUDA"),
            std::string::npos);
  std::string not_elf = cubin;
  not_elf[1] = 'X';
  EXPECT_EQ(InspectCubin(not_elf).status().code(), absl::StatusCode::kDataLoss);
  std::string far_table = cubin;
  far_table[47] = 0x7F;  // e_shoff's top byte: table far past the end
  EXPECT_EQ(InspectCubin(far_table).status().code(),
            absl::StatusCode::kDataLoss);
  std::string bad_names = cubin;
  bad_names[62] = static_cast<char>(0xFF);  // e_shstrndx past the table
  bad_names[63] = static_cast<char>(0xFF);
  EXPECT_EQ(InspectCubin(bad_names).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(CubinInfoTest, RandomCorruptionNeverCrashes) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::mt19937_64 rng(seed);
  const std::string cubin = CompileFor("sm_90a");
  ASSERT_FALSE(cubin.empty());
  int rejected = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string corrupt = cubin;
    for (int flips = 1 + rng() % 8; flips > 0; --flips) {
      corrupt[rng() % corrupt.size()] = static_cast<char>(rng());
    }
    absl::StatusOr<CubinInfo> info = InspectCubin(corrupt);
    if (!info.ok()) {
      ASSERT_EQ(info.status().code(), absl::StatusCode::kDataLoss);
      ++rejected;
    }
  }
  // Most flips land in code bytes the parser does not read; some do not.
  EXPECT_GT(rejected, 0);
}

TEST(CubinInfoTest, CompatibilityFollowsSassRules) {
  CubinInfo sm80;
  sm80.sm = 80;
  CubinInfo sm90a;
  sm90a.sm = 90;
  sm90a.arch_specific = true;
  EXPECT_TRUE(CubinRunsOn(sm80, Gpu(80, false)));
  EXPECT_TRUE(CubinRunsOn(sm80, Gpu(86, false)));
  EXPECT_TRUE(CubinRunsOn(sm80, Gpu(89, false)));
  EXPECT_FALSE(CubinRunsOn(sm80, Gpu(75, false)));
  EXPECT_FALSE(CubinRunsOn(sm80, Gpu(90, false)));
  EXPECT_TRUE(CubinRunsOn(sm90a, Gpu(90, false)));
  EXPECT_TRUE(CubinRunsOn(sm90a, Gpu(90, true)));
  EXPECT_FALSE(CubinRunsOn(sm90a, Gpu(100, false)));
  CubinInfo sm86;
  sm86.sm = 86;
  EXPECT_FALSE(CubinRunsOn(sm86, Gpu(80, false)));
}

}  // namespace
}  // namespace hummingd
