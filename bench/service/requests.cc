#include "bench/service/requests.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "kernels/launch_abi.h"

namespace hummingd::bench {

std::vector<BenchCase> DefaultBenchCases() {
  constexpr char kW4A16[] =
      "weight=uint4,group=128,scale=fp16,zero=none,act=fp16,out=fp16";
  constexpr char kFp8[] =
      "weight=e4m3,group=channel,scale=fp32,zero=none,act=bf16,out=bf16";
  constexpr char kMxfp4[] =
      "weight=e2m1,group=32,scale=ue8m0,zero=none,act=bf16,out=bf16";
  const auto dequant = [](const char* label, const char* spec, int64_t n,
                          int64_t k) {
    return BenchCase{label, v1::KERNEL_FAMILY_DEQUANT, spec, n, k};
  };
  return {
      dequant("w4a16 qkv", kW4A16, 6144, 4096),
      dequant("w4a16 o_proj", kW4A16, 4096, 4096),
      dequant("w4a16 gate_up", kW4A16, 28672, 4096),
      dequant("w4a16 down", kW4A16, 4096, 14336),
      dequant("fp8 e4m3 o_proj", kFp8, 4096, 4096),
      dequant("mxfp4 e2m1/ue8m0 o_proj", kMxfp4, 4096, 4096),
  };
}

absl::StatusOr<BenchCase> ParseBenchCase(const std::string& text) {
  const std::vector<std::string> parts = absl::StrSplit(text, ':');
  const std::vector<std::string> shape = parts.size() == 4
                                             ? absl::StrSplit(parts[3], 'x')
                                             : std::vector<std::string>{};
  BenchCase bench_case;
  const bool family_ok =
      parts.size() == 4 && (parts[1] == "dequant" || parts[1] == "gemm");
  if (!family_ok || shape.size() != 2 ||
      !absl::SimpleAtoi(shape[0], &bench_case.n) ||
      !absl::SimpleAtoi(shape[1], &bench_case.k) || bench_case.n <= 0 ||
      bench_case.k <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--case: must be LABEL:FAMILY:SPEC:NxK with FAMILY dequant|gemm and "
        "positive N, K (got '",
        text, "')"));
  }
  bench_case.label = parts[0];
  bench_case.family =
      parts[1] == "gemm" ? v1::KERNEL_FAMILY_GEMM : v1::KERNEL_FAMILY_DEQUANT;
  bench_case.spec_text = parts[2];
  return bench_case;
}

v1::GetKernelsRequest MakeGetKernelsRequest(const BenchCase& bench_case,
                                            const GpuProfile& gpu) {
  v1::GetKernelsRequest message;
  v1::KernelRequest& request = *message.mutable_request();
  request.set_family(bench_case.family);
  request.mutable_spec()->set_text(bench_case.spec_text);
  request.mutable_shape()->set_n(bench_case.n);
  request.mutable_shape()->set_k(bench_case.k);
  request.mutable_gpu()->set_arch(gpu.arch);
  request.mutable_gpu()->set_sm_count(gpu.sm_count);
  request.mutable_gpu()->set_max_shared_memory_per_block_optin(
      gpu.max_shared_memory_per_block_optin);
  request.mutable_gpu()->set_device_name(gpu.device_name);
  request.set_name(bench_case.label);
  // What clients of this build send (the plans they are served).
  request.set_launch_abi(kCurrentLaunchAbi);
  return message;
}

}  // namespace hummingd::bench
