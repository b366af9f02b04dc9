#include "bench/kernel/gpu_ceilings.h"

#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hummingd::bench {
namespace {

// One entry per GPU that issue 5's tables ran on. A GPU not listed gets this
// run's measurements (ChooseCeilings); its first table's round then says
// what to commit here (bench/README.md, "Which GPU").
constexpr std::array<CommittedCeilings, 1> kCommitted = {{
    {"NVIDIA H200", 90, 4.18, 800.0,
     "KERNELS.md: a large device-to-device copy, a dense 8192^3 GEMM"},
}};

std::string Number(double value) { return absl::StrFormat("%.4g", value); }

}  // namespace

const CommittedCeilings* FindCommittedCeilings(absl::string_view gpu_name) {
  for (const CommittedCeilings& entry : kCommitted) {
    if (entry.gpu_name == gpu_name) return &entry;
  }
  return nullptr;
}

absl::StatusOr<GpuCeilings> ChooseCeilings(const CeilingEvidence& evidence) {
  if (evidence.flag_copy_tbps < 0 || evidence.flag_tensor_tflops < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--copy_tbps ", evidence.flag_copy_tbps,
                     " / --tensor_tflops ", evidence.flag_tensor_tflops,
                     ": a ceiling is a rate above 0 (0: choose it)"));
  }
  const CommittedCeilings* committed = FindCommittedCeilings(evidence.gpu_name);
  GpuCeilings ceilings;

  Ceiling& copy = ceilings.copy_tbps;
  if (evidence.flag_copy_tbps > 0) {
    copy = {evidence.flag_copy_tbps, "--copy_tbps"};
  } else if (committed != nullptr) {
    copy = {committed->copy_tbps,
            absl::StrCat("committed for this GPU: ", committed->measured)};
  } else if (evidence.measured_copy_tbps && *evidence.measured_copy_tbps > 0) {
    copy = {*evidence.measured_copy_tbps,
            "measured this run; none committed for this GPU"};
  } else {
    return absl::FailedPreconditionError(absl::StrCat(
        "no copy bandwidth for '", evidence.gpu_name,
        "': none committed (bench/kernel/gpu_ceilings.cc), none measured this "
        "run, no --copy_tbps"));
  }

  Ceiling& tensor = ceilings.tensor_tflops;
  if (evidence.flag_tensor_tflops > 0) {
    tensor = {evidence.flag_tensor_tflops, "--tensor_tflops"};
    return ceilings;
  }
  if (committed != nullptr) {
    tensor = {committed->tensor_tflops,
              absl::StrCat("committed for this GPU: ", committed->measured)};
    return ceilings;
  }
  if (evidence.measured_tensor_tflops && *evidence.measured_tensor_tflops > 0) {
    tensor = {*evidence.measured_tensor_tflops,
              "cuBLAS this run; none committed for this GPU"};
    return ceilings;
  }
  for (const CommittedCeilings& entry : kCommitted) {
    if (entry.sm == evidence.sm) {
      tensor = {
          entry.tensor_tflops,
          absl::StrCat("not measured on this GPU: the committed rate of ",
                       entry.gpu_name, ", the same sm_", entry.sm, " SMs")};
      return ceilings;
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "no tensor rate for '", evidence.gpu_name, "' (sm_", evidence.sm,
      "): none committed for it or its compute capability, no cuBLAS "
      "measurement (--cublas_json from cublas_reference.py), no "
      "--tensor_tflops"));
}

std::string DescribeCeilings(const CeilingEvidence& evidence,
                             const GpuCeilings& ceilings) {
  std::string line = absl::StrCat(
      "GPU: ", evidence.gpu_name, " (sm_", evidence.sm,
      "). Roofline ceilings: copy ", Number(ceilings.copy_tbps.value),
      " TB/s (", ceilings.copy_tbps.source, "), tensor ",
      Number(ceilings.tensor_tflops.value), " TFLOP/s (",
      ceilings.tensor_tflops.source, ").");
  std::string measured;
  if (evidence.measured_copy_tbps) {
    absl::StrAppend(&measured, " copy ", Number(*evidence.measured_copy_tbps),
                    " TB/s");
  }
  if (evidence.measured_tensor_tflops) {
    absl::StrAppend(&measured, measured.empty() ? "" : ",", " tensor ",
                    Number(*evidence.measured_tensor_tflops),
                    " TFLOP/s (cuBLAS fp16 8192^3)");
  }
  if (!measured.empty())
    absl::StrAppend(&line, " Measured this run:", measured, ".");
  return line;
}

}  // namespace hummingd::bench
