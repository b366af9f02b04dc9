#include "kernels/nvrtc_compiler.h"

#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/codegen.h"
#include "kernels/cubin_info.h"
#include "kernels/embedded_headers.h"
#include "kernels/gpu_target.h"

namespace hummingd {
namespace {

// The one place an nvrtcResult becomes a Status (STYLE.md, "Errors"). A
// compile failure carries the compiler log; running out of memory is a
// resource limit, everything else is an internal error of ours or NVRTC's.
absl::Status NvrtcError(nvrtcResult result, std::string_view call,
                        std::string_view log = {}) {
  std::string message = absl::StrCat("nvrtc: ", std::string(call),
                                     " failed: ", nvrtcGetErrorString(result));
  if (!log.empty()) absl::StrAppend(&message, "\n", std::string(log));
  if (result == NVRTC_ERROR_OUT_OF_MEMORY) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

absl::Status CheckNvrtc(nvrtcResult result, std::string_view call) {
  if (result == NVRTC_SUCCESS) return absl::OkStatus();
  return NvrtcError(result, call);
}

// NVRTC wants NUL-terminated arrays of header contents and include names.
// Built once from the embedded set and never modified, so sharing it across
// compiling threads is safe.
struct HeaderTable {
  std::vector<std::string> names;
  std::vector<std::string> contents;
  std::vector<const char*> name_pointers;
  std::vector<const char*> content_pointers;
};

const HeaderTable& EmbeddedHeaderTable() {
  static const HeaderTable* const table = [] {
    auto* built = new HeaderTable;
    for (const EmbeddedHeader& header : EmbeddedHeaders()) {
      built->names.emplace_back(header.path);
      built->contents.emplace_back(header.content);
    }
    for (size_t i = 0; i < built->names.size(); ++i) {
      built->name_pointers.push_back(built->names[i].c_str());
      built->content_pointers.push_back(built->contents[i].c_str());
    }
    return built;
  }();
  return *table;
}

// Owns an nvrtcProgram for the duration of one compile.
class Program {
 public:
  Program() = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() {
    if (program_ != nullptr) nvrtcDestroyProgram(&program_);
  }
  nvrtcProgram* out() { return &program_; }
  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_ = nullptr;
};

absl::StatusOr<std::string> ProgramLog(nvrtcProgram program) {
  size_t size = 0;
  RETURN_IF_ERROR(CheckNvrtc(nvrtcGetProgramLogSize(program, &size),
                             "nvrtcGetProgramLogSize"));
  std::string log(size, '\0');
  if (size > 0) {
    RETURN_IF_ERROR(CheckNvrtc(nvrtcGetProgramLog(program, log.data()),
                               "nvrtcGetProgramLog"));
  }
  // The size includes the terminating NUL.
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) {
    log.pop_back();
  }
  return log;
}

absl::StatusOr<std::string> ProgramCubin(nvrtcProgram program) {
  size_t size = 0;
  RETURN_IF_ERROR(
      CheckNvrtc(nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize"));
  if (size == 0) {
    return absl::InternalError(
        "nvrtc: compile produced no cubin (was a virtual arch requested?)");
  }
  std::string cubin(size, '\0');
  RETURN_IF_ERROR(
      CheckNvrtc(nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN"));
  return cubin;
}

ToolchainInfo ReadToolchain() {
  ToolchainInfo info;
  if (nvrtcVersion(&info.nvrtc_major, &info.nvrtc_minor) != NVRTC_SUCCESS) {
    info = ToolchainInfo{};
  }
  return info;
}

// The compiler's output must be what was asked for before anything caches
// it: a cubin for this SM that exports the entry point.
absl::Status VerifyCubin(const std::string& cubin, const KernelSource& source,
                         const GpuTarget& gpu) {
  absl::StatusOr<CubinInfo> info = InspectCubin(cubin);
  if (!info.ok()) {
    return absl::InternalError(absl::StrCat(
        "nvrtc: produced an unreadable cubin: ", info.status().message()));
  }
  if (info->sm != gpu.sm || info->arch_specific != gpu.arch_specific) {
    return absl::InternalError(absl::StrCat("nvrtc: asked for ", gpu.ArchName(),
                                            ", got a cubin for ",
                                            info->ArchName()));
  }
  if (std::find(info->kernels.begin(), info->kernels.end(), source.entry) ==
      info->kernels.end()) {
    return absl::InternalError(absl::StrCat(
        "nvrtc: cubin of ", source.name, " lacks entry '", source.entry, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ToolchainInfo::Identity() const {
  return absl::StrCat("nvrtc-", nvrtc_major, ".", nvrtc_minor);
}

const ToolchainInfo& Toolchain() {
  static const ToolchainInfo* const info = new ToolchainInfo(ReadToolchain());
  return *info;
}

std::vector<std::string> CanonicalCompileOptions(const GpuTarget& gpu) {
  // Fixed order, no paths: this list is part of every artifact key. --fmad
  // is spelled out (it is NVRTC's default) so that a changed default cannot
  // silently alter kernels behind an unchanged key; --use_fast_math is never
  // used because the numerics must match the CPU reference bit for bit.
  return {
      absl::StrCat("--gpu-architecture=", gpu.ArchName()),
      "-std=c++17",
      "--fmad=true",
  };
}

absl::StatusOr<CompiledKernel> CompileKernel(const KernelSource& source,
                                             const GpuTarget& gpu) {
  const auto start = std::chrono::steady_clock::now();
  const HeaderTable& headers = EmbeddedHeaderTable();

  Program program;
  RETURN_IF_ERROR(CheckNvrtc(
      nvrtcCreateProgram(
          program.out(), source.source.c_str(), source.name.c_str(),
          static_cast<int>(headers.names.size()),
          headers.content_pointers.data(), headers.name_pointers.data()),
      "nvrtcCreateProgram"));

  const std::vector<std::string> options = CanonicalCompileOptions(gpu);
  std::vector<const char*> option_pointers;
  for (const std::string& option : options) {
    option_pointers.push_back(option.c_str());
  }
  const nvrtcResult compiled = nvrtcCompileProgram(
      program.get(), static_cast<int>(option_pointers.size()),
      option_pointers.data());
  ASSIGN_OR_RETURN(std::string log, ProgramLog(program.get()));
  if (compiled != NVRTC_SUCCESS) {
    return NvrtcError(
        compiled,
        absl::StrCat("compiling ", source.name, " for ", gpu.ArchName()), log);
  }

  CompiledKernel kernel;
  ASSIGN_OR_RETURN(kernel.cubin, ProgramCubin(program.get()));
  RETURN_IF_ERROR(VerifyCubin(kernel.cubin, source, gpu));
  kernel.entry = source.entry;
  kernel.log = std::move(log);
  kernel.compile_ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  return kernel;
}

}  // namespace hummingd
