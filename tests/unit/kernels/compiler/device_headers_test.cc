// Every embedded device header compiles on its own under NVRTC (STYLE.md:
// each .cuh is self-contained and needs no host headers), on the oldest and
// the newest CI arch, since some headers branch on __CUDA_ARCH__.

#include <string>

#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/embedded_headers.h"
#include "kernels/gpu_target.h"
#include "kernels/nvrtc_compiler.h"

namespace hummingd {
namespace {

TEST(DeviceHeadersTest, EveryHeaderCompilesAlone) {
  for (const char* arch : {"sm_75", "sm_90a"}) {
    const absl::StatusOr<GpuTarget> gpu = ParseGpuArch(arch);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    int compiled = 0;
    for (const EmbeddedHeader& header : EmbeddedHeaders()) {
      KernelSource source;
      source.name = "self_contained.cu";
      source.entry = "hummingd_probe";
      source.source = "#include \"" + std::string(header.path) +
                      "\"\n#include \"" + std::string(header.path) +
                      "\"\nextern \"C\" __global__ void hummingd_probe() {}\n";
      const absl::StatusOr<CompiledKernel> kernel = CompileKernel(source, *gpu);
      EXPECT_TRUE(kernel.ok())
          << header.path << " on " << arch << ": " << kernel.status();
      ++compiled;
    }
    EXPECT_GT(compiled, 10);
  }
}

}  // namespace
}  // namespace hummingd
