// NVRTC failures come back as INTERNAL with the compiler log attached, and
// what the compiler produced is verified before it is returned.

#include <string>

#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/gpu_target.h"
#include "kernels/nvrtc_compiler.h"

namespace hummingd {
namespace {

GpuTarget Gpu(int sm, bool arch_specific = false) {
  GpuTarget gpu;
  gpu.sm = sm;
  gpu.arch_specific = arch_specific;
  return gpu;
}

KernelSource Source(std::string text, std::string entry = "hummingd_probe") {
  KernelSource source;
  source.source = std::move(text);
  source.entry = std::move(entry);
  source.name = "hummingd_probe.cu";
  return source;
}

const GpuTarget kSm80 = Gpu(80);

TEST(CompileErrorTest, SyntaxErrorIsInternalWithTheLog) {
  absl::StatusOr<CompiledKernel> kernel = CompileKernel(
      Source("extern \"C\" __global__ void hummingd_probe(int* out) {\n"
             "  out[0] = hummingd_undefined_symbol;\n}\n"),
      kSm80);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInternal);
  const std::string message(kernel.status().message());
  EXPECT_NE(message.find("hummingd_undefined_symbol"), std::string::npos)
      << message;
  EXPECT_NE(message.find("hummingd_probe.cu"), std::string::npos) << message;
  EXPECT_NE(message.find("sm_80"), std::string::npos) << message;
}

TEST(CompileErrorTest, MissingHeaderIsInternal) {
  absl::StatusOr<CompiledKernel> kernel = CompileKernel(
      Source("#include \"gemm/no_such_skeleton.cuh\"\n"
             "extern \"C\" __global__ void hummingd_probe() {}\n"),
      kSm80);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(kernel.status().message().find("no_such_skeleton.cuh"),
            std::string::npos)
      << kernel.status();
}

TEST(CompileErrorTest, MissingEntryPointIsCaught) {
  absl::StatusOr<CompiledKernel> kernel =
      CompileKernel(Source("extern \"C\" __global__ void some_other_name(int* "
                           "p) { p[0] = 1; }\n"),
                    kSm80);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(kernel.status().message().find("lacks entry 'hummingd_probe'"),
            std::string::npos)
      << kernel.status();
}

TEST(CompileErrorTest, EmbeddedHeadersResolveAndWarningsReachTheLog) {
  absl::StatusOr<CompiledKernel> kernel = CompileKernel(
      Source("#include \"numeric/float_decode.cuh\"\n"
             "extern \"C\" __global__ void hummingd_probe(float* out) {\n"
             "  int unused_variable_for_the_log;\n"
             "  out[0] = hummingd::device::decode_float_bits<\n"
             "      hummingd::device::FloatFormat<4, 3>>(0x38u);\n}\n"),
      kSm80);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->entry, "hummingd_probe");
  EXPECT_FALSE(kernel->cubin.empty());
  EXPECT_GT(kernel->compile_ms, 0.0);
  EXPECT_NE(kernel->log.find("unused_variable_for_the_log"), std::string::npos)
      << kernel->log;
}

TEST(CompileErrorTest, OptionsAreCanonical) {
  const std::vector<std::string> options =
      CanonicalCompileOptions(Gpu(90, true));
  ASSERT_FALSE(options.empty());
  EXPECT_EQ(options[0], "--gpu-architecture=sm_90a");
  EXPECT_EQ(CanonicalCompileOptions(GpuTarget{90, true, 132, 0, "H100"}),
            options);
  for (const std::string& option : options) {
    EXPECT_EQ(option.find("fast_math"), std::string::npos);
    EXPECT_EQ(option.find('/'), std::string::npos) << "no paths: " << option;
  }
  EXPECT_EQ(Toolchain().Identity(),
            "nvrtc-" + std::to_string(Toolchain().nvrtc_major) + "." +
                std::to_string(Toolchain().nvrtc_minor));
  EXPECT_GE(Toolchain().nvrtc_major, 12);
}

}  // namespace
}  // namespace hummingd
