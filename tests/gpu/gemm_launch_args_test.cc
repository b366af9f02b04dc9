// The GEMM launch arguments the client derives without a GPU: which scale
// tensor a launch passes, which kernel sets a client's launch ABI
// accepts, and which family each op takes.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "hummingd/gpu/quantized_linear.h"
#include "hummingd/v1/kernel_service.pb.h"
#include "kernels/launch_abi.h"
#include "kernels/quant_spec.h"

namespace hummingd::gpu::testing {
namespace {

// Without a GPU: the scale pointer a launch passes (LaunchGemm and
// QuantizedLinear::Forward share GemmScalesArgument) is the checkpoint
// tensor, except for kernels that read k-major scales: the transposed copy
// for group scales, the checkpoint tensor for channel-wise ones, and a
// refusal where the layer has neither.
TEST(GemmLaunchArgsTest, KMajorScalesFollowTheSpecAndAreRequired) {
  auto spec = [](const char* text) { return *ParseSpecText(text); };
  LoadedKernel k_major;
  k_major.m_min = 1;
  k_major.m_max = 8;
  k_major.k_major_scales = true;
  LoadedKernel row_windows = k_major;
  row_windows.k_major_scales = false;
  const CUdeviceptr scales = 0x10000;
  const CUdeviceptr copy = 0x20000;
  const QuantSpec group = spec("weight=uint4,group=128,scale=fp16");
  const QuantSpec channel = spec("weight=uint8,group=channel,scale=fp16");
  const QuantSpec zero = spec("weight=uint4,group=128,scale=fp16,zero=int");

  absl::StatusOr<const void*> arg =
      GemmScalesArgument(group, k_major, scales, copy);
  ASSERT_TRUE(arg.ok()) << arg.status();
  EXPECT_EQ(*arg, reinterpret_cast<const void*>(copy));
  arg = GemmScalesArgument(channel, k_major, scales, 0);
  ASSERT_TRUE(arg.ok()) << arg.status();
  EXPECT_EQ(*arg, reinterpret_cast<const void*>(scales));
  arg = GemmScalesArgument(group, row_windows, scales, copy);
  ASSERT_TRUE(arg.ok()) << arg.status();
  EXPECT_EQ(*arg, reinterpret_cast<const void*>(scales));
  arg = GemmScalesArgument(zero, row_windows, scales, 0);
  ASSERT_TRUE(arg.ok()) << arg.status();
  EXPECT_EQ(*arg, reinterpret_cast<const void*>(scales));

  EXPECT_EQ(GemmScalesArgument(group, k_major, scales, 0).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(GemmScalesArgument(zero, k_major, scales, copy).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// Without a GPU: a set with a k-major kernel is refused unless the daemon
// says it planned it for a launch ABI that passes k-major scales (a daemon
// from before the request's launch_abi field would not); likewise any tile
// above the set's launch ABI.
TEST(GemmLaunchArgsTest, KMajorKernelsNeedASetPlannedForTheirAbi) {
  v1::KernelSet set;
  set.add_kernels()->set_config("tile=8x128x128,warps=1x8,stages=4,mma=wgmma");
  set.add_kernels()->set_config(
      "tile=16x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
  set.set_launch_abi(kLaunchAbiOriginal);
  const absl::Status refused = CheckKernelSetLaunchAbi(set);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_NE(refused.message().find("kernel_set.kernels[1]"), std::string::npos)
      << refused;
  set.set_launch_abi(kLaunchAbiKMajorScales);
  EXPECT_TRUE(CheckKernelSetLaunchAbi(set).ok());
  set.set_launch_abi(kLaunchAbiOriginal);
  set.mutable_kernels()->RemoveLast();
  EXPECT_TRUE(CheckKernelSetLaunchAbi(set).ok());
  // Any tile above the set's ABI: a 128-token grouped one needs ABI 3.
  set.add_kernels()->set_config(
      "tile=128x128x128,warps=1x8,stages=4,mma=wgmma,order=grouped");
  set.set_launch_abi(kLaunchAbiKSplitTiles);
  const absl::Status wide = CheckKernelSetLaunchAbi(set);
  EXPECT_EQ(wide.code(), absl::StatusCode::kFailedPrecondition) << wide;
  EXPECT_NE(wide.message().find("needs launch ABI 3"), std::string::npos)
      << wide;
  set.set_launch_abi(kLaunchAbiPrefillTiles);
  EXPECT_TRUE(CheckKernelSetLaunchAbi(set).ok());
}

// Without a GPU: each op takes only its own family's sets, whose kernels
// take its argument struct (a GEMM kernel launched with DequantArgs would
// read pointers from past the struct).
TEST(GemmLaunchArgsTest, OpsTakeOnlyTheirFamilysSets) {
  EXPECT_TRUE(CheckKernelSetFamily(v1::KERNEL_FAMILY_GEMM,
                                   v1::KERNEL_FAMILY_GEMM, "a layer")
                  .ok());
  const absl::Status gemm_to_dequant = CheckKernelSetFamily(
      v1::KERNEL_FAMILY_GEMM, v1::KERNEL_FAMILY_DEQUANT, "dequantize");
  EXPECT_EQ(gemm_to_dequant.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(gemm_to_dequant.message(),
            "kernel_set.family: dequantize needs a \"dequant\" kernel set "
            "(got \"gemm\")");
  const absl::Status unspecified = CheckKernelSetFamily(
      v1::KERNEL_FAMILY_UNSPECIFIED, v1::KERNEL_FAMILY_GEMM, "a layer");
  EXPECT_EQ(unspecified.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unspecified.message(),
            "kernel_set.family: a layer needs a \"gemm\" kernel set (got "
            "unspecified)");
  // A family this client does not know (a newer daemon's) by its number.
  const absl::Status unknown =
      CheckKernelSetFamily(static_cast<v1::KernelFamily>(7),
                           v1::KERNEL_FAMILY_DEQUANT, "dequantize");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.message(),
            "kernel_set.family: dequantize needs a \"dequant\" kernel set "
            "(got unknown family 7)");
}

}  // namespace
}  // namespace hummingd::gpu::testing
