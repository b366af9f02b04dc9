// The C ABI from a C program (c_api_program.c) against the real daemon: its
// kernels are the daemon's, byte for byte.

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/integration/client/client_test_util.h"

namespace hummingd::testing {
namespace {

// The layer c_api_program.c resolves.
constexpr int64_t kProgramN = 512;
constexpr int64_t kProgramK = 1024;
constexpr char kProgramArch[] = "sm_80";

class CApiTest : public DaemonTest {};

std::vector<std::string> KernelLines(const std::string& output) {
  std::vector<std::string> lines;
  std::istringstream stream(output);
  for (std::string line; std::getline(stream, line);) {
    if (line.rfind("kernel ", 0) == 0) lines.push_back(line);
  }
  return lines;
}

TEST_F(CApiTest, CProgramResolvesAndPrefetchesThroughTheDaemon) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  const std::string manifest = dir_.path() + "/manifest.yaml";
  {
    std::ofstream file(manifest);
    file << "arch: sm_80\nfamily: dequant\nspec: " << kW4Spec
         << "\nlayers:\n  - {name: a, n: 256, k: 256}\n"
            "  - {name: b, n: 768, k: 256}\n";
  }
  CommandResult run = RunCommand(
      {CLIENT_C_API_PROGRAM_PATH, "daemon", SocketPath(), "", manifest});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("mode daemon"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\nok\n"), std::string::npos) << run.output;

  auto stub = daemon->Stub();
  v1::GetKernelsResponse response;
  ASSERT_TRUE(Get(*stub,
                  DequantRequest(kProgramN, kProgramK, kW4Spec, kProgramArch),
                  &response)
                  .ok());
  const v1::KernelSet& set = response.kernel_set();
  const auto cubins = CubinsByKey(set);
  std::vector<std::string> expected;
  for (int i = 0; i < set.kernels_size(); ++i) {
    const v1::Kernel& kernel = set.kernels(i);
    const std::string& cubin = cubins.at(kernel.artifact_key());
    expected.push_back(absl::StrFormat(
        "kernel %d %d %d %s %d %016x", i, kernel.m_min(), kernel.m_max(),
        kernel.artifact_key(), cubin.size(), Fnv1a64(cubin)));
  }
  EXPECT_EQ(KernelLines(run.output), expected) << run.output;
  // The manifest's two layers were compiled by the daemon.
  EXPECT_GE(Counter(*stub, "prefetch_items"), 2);
}

TEST_F(CApiTest, CProgramInAutoModeWithoutDaemonIsEmbedded) {
  CommandResult run = RunCommand({CLIENT_C_API_PROGRAM_PATH, "auto",
                                  SocketPath(), dir_.path() + "/embedded"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("mode embedded"), std::string::npos) << run.output;
  EXPECT_FALSE(KernelLines(run.output).empty()) << run.output;
}

TEST_F(CApiTest, CProgramInDaemonModeWithoutDaemonFails) {
  CommandResult run =
      RunCommand({CLIENT_C_API_PROGRAM_PATH, "daemon", SocketPath(), ""});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("create failed: UNAVAILABLE"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find(SocketPath()), std::string::npos) << run.output;
}

}  // namespace
}  // namespace hummingd::testing
