#include "kernels/gpu_target.h"

#include <array>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace hummingd {
namespace {

// Archs that NVRTC can target and the kernels support. Anything else is
// refused up front rather than failing later inside the compiler.
constexpr std::array<absl::string_view, 11> kSupportedArchs = {
    "sm_75",  "sm_80",  "sm_86",   "sm_87",  "sm_89",  "sm_90",
    "sm_90a", "sm_100", "sm_100a", "sm_120", "sm_120a"};

}  // namespace

std::string GpuTarget::ArchName() const {
  return absl::StrCat("sm_", sm, arch_specific ? "a" : "");
}

absl::StatusOr<GpuTarget> ParseGpuArch(std::string_view arch_view) {
  // This Abseil build has its own string_view type; convert once here.
  const absl::string_view arch(arch_view.data(), arch_view.size());
  for (absl::string_view supported : kSupportedArchs) {
    if (arch != supported) continue;
    absl::string_view digits = supported.substr(3);
    GpuTarget target;
    target.arch_specific = digits.back() == 'a';
    if (target.arch_specific) digits.remove_suffix(1);
    int sm = 0;
    for (char c : digits) sm = sm * 10 + (c - '0');
    target.sm = sm;
    return target;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "gpu.arch: unsupported architecture '", arch,
      "' (supported: ", absl::StrJoin(kSupportedArchs, ", "), ")"));
}

}  // namespace hummingd
