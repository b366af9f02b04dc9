// Which ceilings a bench's roofline takes on which GPU: the committed H200
// values on the H200 whatever this run measured, this run's measurements on
// a GPU with none committed (the H100 the device tool lends first), the
// flags over both, and a clear error where nothing gives a ceiling.

#include "bench/kernel/gpu_ceilings.h"

#include <string>

#include "gtest/gtest.h"

namespace hummingd::bench {
namespace {

CeilingEvidence Evidence(const std::string& gpu_name, int sm) {
  CeilingEvidence evidence;
  evidence.gpu_name = gpu_name;
  evidence.sm = sm;
  return evidence;
}

TEST(GpuCeilingsTest, TheH200KeepsKernelsMdCeilingsWhateverThisRunMeasured) {
  CeilingEvidence evidence = Evidence("NVIDIA H200", 90);
  evidence.measured_copy_tbps = 4.27;
  evidence.measured_tensor_tflops = 791.0;
  const absl::StatusOr<GpuCeilings> ceilings = ChooseCeilings(evidence);
  ASSERT_TRUE(ceilings.ok()) << ceilings.status();
  EXPECT_DOUBLE_EQ(ceilings->copy_tbps.value, 4.18);
  EXPECT_DOUBLE_EQ(ceilings->tensor_tflops.value, 800.0);
  EXPECT_NE(ceilings->copy_tbps.source.find("committed for this GPU"),
            std::string::npos);
  const std::string line = DescribeCeilings(evidence, *ceilings);
  EXPECT_NE(line.find("GPU: NVIDIA H200 (sm_90). Roofline ceilings: copy "
                      "4.18 TB/s"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("Measured this run: copy 4.27 TB/s, tensor 791 "
                      "TFLOP/s"),
            std::string::npos)
      << line;
}

TEST(GpuCeilingsTest, AGpuWithNoneCommittedTakesThisRunsMeasurements) {
  CeilingEvidence evidence = Evidence("NVIDIA H100 80GB HBM3", 90);
  evidence.measured_copy_tbps = 3.02;
  evidence.measured_tensor_tflops = 771.5;
  ASSERT_EQ(FindCommittedCeilings(evidence.gpu_name), nullptr);
  const absl::StatusOr<GpuCeilings> ceilings = ChooseCeilings(evidence);
  ASSERT_TRUE(ceilings.ok()) << ceilings.status();
  EXPECT_DOUBLE_EQ(ceilings->copy_tbps.value, 3.02);
  EXPECT_DOUBLE_EQ(ceilings->tensor_tflops.value, 771.5);
  EXPECT_NE(ceilings->copy_tbps.source.find("measured this run"),
            std::string::npos);
  EXPECT_NE(ceilings->tensor_tflops.source.find("cuBLAS this run"),
            std::string::npos);
}

// Without cuBLAS (the sweeps run no PyTorch) the tensor rate is the
// committed one of a GPU of the same compute capability, and says so; a
// GPU of another capability has no such stand-in.
TEST(GpuCeilingsTest, WithoutCublasTheTensorRateIsTheSameChipsAndSaysSo) {
  CeilingEvidence evidence = Evidence("NVIDIA H100 80GB HBM3", 90);
  evidence.measured_copy_tbps = 3.02;
  const absl::StatusOr<GpuCeilings> ceilings = ChooseCeilings(evidence);
  ASSERT_TRUE(ceilings.ok()) << ceilings.status();
  EXPECT_DOUBLE_EQ(ceilings->tensor_tflops.value, 800.0);
  EXPECT_NE(ceilings->tensor_tflops.source.find(
                "not measured on this GPU: the committed rate of NVIDIA H200"),
            std::string::npos)
      << ceilings->tensor_tflops.source;

  CeilingEvidence ada = Evidence("NVIDIA L40S", 89);
  ada.measured_copy_tbps = 0.8;
  const absl::StatusOr<GpuCeilings> none = ChooseCeilings(ada);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(none.status().message().find("no tensor rate for 'NVIDIA L40S'"),
            std::string::npos)
      << none.status();
}

TEST(GpuCeilingsTest, FlagsWinOverCommittedAndMeasured) {
  CeilingEvidence evidence = Evidence("NVIDIA H200", 90);
  evidence.flag_copy_tbps = 4.5;
  evidence.flag_tensor_tflops = 900;
  evidence.measured_copy_tbps = 4.27;
  const absl::StatusOr<GpuCeilings> ceilings = ChooseCeilings(evidence);
  ASSERT_TRUE(ceilings.ok()) << ceilings.status();
  EXPECT_DOUBLE_EQ(ceilings->copy_tbps.value, 4.5);
  EXPECT_DOUBLE_EQ(ceilings->tensor_tflops.value, 900.0);
  EXPECT_EQ(ceilings->copy_tbps.source, "--copy_tbps");

  evidence.flag_tensor_tflops = -1;
  const absl::StatusOr<GpuCeilings> negative = ChooseCeilings(evidence);
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(negative.status().message().find("a ceiling is a rate above 0"),
            std::string::npos)
      << negative.status();
}

TEST(GpuCeilingsTest, NoCopyBandwidthAnywhereIsAClearError) {
  const absl::StatusOr<GpuCeilings> ceilings =
      ChooseCeilings(Evidence("NVIDIA H100 80GB HBM3", 90));
  EXPECT_EQ(ceilings.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(ceilings.status().message().find(
                "no copy bandwidth for 'NVIDIA H100 80GB HBM3'"),
            std::string::npos)
      << ceilings.status();
}

}  // namespace
}  // namespace hummingd::bench
