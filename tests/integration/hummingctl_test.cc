// hummingctl against the real daemon: the spellings scripts rely on.

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "tests/integration/daemon_test_util.h"

namespace hummingd::testing {
namespace {

class HummingctlTest : public DaemonTest {};

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

TEST_F(HummingctlTest, GetPrintsTableAndWritesCubins) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  const std::string out_dir = dir_.path() + "/cubins";
  CommandResult first =
      Ctl({"get", "--kind", "dequant", "--spec",
           "weight=e2m1,group=32,scale=ue8m0,act=bf16,out=bf16", "--n", "4096",
           "--k", "4096", "--arch", "sm_90a", "--out", out_dir});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("M-range"), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("hummingd_dequant"), std::string::npos);
  EXPECT_NE(first.output.find("miss"), std::string::npos) << first.output;

  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(out_dir)) {
    files.push_back(entry.path());
  }
  ASSERT_EQ(files.size(), 1u);
  const std::string cubin = ReadFile(files[0].string());
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");

  // The same bytes the RPC serves.
  auto stub = daemon->Stub();
  v1::GetKernelsResponse response;
  ASSERT_TRUE(Get(*stub,
                  DequantRequest(4096, 4096,
                                 "weight=e2m1,group=32,scale=ue8m0,act=bf16,"
                                 "out=bf16"),
                  &response)
                  .ok());
  EXPECT_EQ(response.kernel_set().kernels(0).cubin(), cubin);

  CommandResult second =
      Ctl({"get", "--kind", "dequant", "--spec",
           "weight=e2m1,group=32,scale=ue8m0,act=bf16,out=bf16", "--n", "4096",
           "--k", "4096", "--arch", "sm_90a"});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find(" hit "), std::string::npos) << second.output;
}

TEST_F(HummingctlTest, StatsHealthLsEvict) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  CommandResult health = Ctl({"health"});
  EXPECT_EQ(health.exit_code, 0) << health.output;
  EXPECT_NE(health.output.find("SERVING"), std::string::npos);

  ASSERT_EQ(Ctl({"get", "--kind", "dequant", "--spec", kW4Spec, "--n", "512",
                 "--k", "512", "--arch", "sm_80"})
                .exit_code,
            0);
  CommandResult stats = Ctl({"stats"});
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  for (const char* line : {"compiles: 1\n", "entries: 1\n", "hits: ",
                           "misses: ", "bytes: ", "corrupt_dropped: 0\n"}) {
    EXPECT_NE(stats.output.find(line), std::string::npos)
        << "missing '" << line << "' in:\n"
        << stats.output;
  }
  CommandResult listing = Ctl({"ls"});
  ASSERT_EQ(listing.exit_code, 0) << listing.output;
  EXPECT_NE(listing.output.find("sm_80"), std::string::npos) << listing.output;
  EXPECT_NE(listing.output.find("1 entries"), std::string::npos);

  CommandResult evict = Ctl({"evict", "--all"});
  ASSERT_EQ(evict.exit_code, 0) << evict.output;
  EXPECT_NE(evict.output.find("evicted: 1"), std::string::npos) << evict.output;
  EXPECT_NE(Ctl({"stats"}).output.find("entries: 0\n"), std::string::npos);
}

TEST_F(HummingctlTest, PrefetchManifestThenEverythingIsCached) {
  auto daemon = StartDaemon({"--compile-threads", "2"});
  ASSERT_NE(daemon, nullptr);
  const std::string manifest = dir_.path() + "/model.yaml";
  {
    std::ofstream file(manifest);
    file << "model: tiny\n"
            "arch: sm_86\n"
            "family: dequant\n"
            "spec: "
            "weight=uint4,group=128,scale=fp16,zero=int,act=fp16,out=fp16\n"
            "layers:\n"
            "  - {name: qkv, n: 768, k: 512}\n"
            "  - {name: o, n: 512, k: 512}\n"
            "  - {name: up, n: 1024, k: 512, spec: \"weight=e4m3,group=channel,"
            "scale=fp32,act=bf16,out=bf16\"}\n";
  }
  CommandResult first = Ctl({"prefetch", manifest});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("3 compiled, 0 cached, 0 failed"),
            std::string::npos)
      << first.output;
  CommandResult second = Ctl({"prefetch", manifest});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("0 compiled, 3 cached, 0 failed"),
            std::string::npos)
      << second.output;

  // A JSON manifest with a bad layer: reported, exit code 1, others served.
  const std::string json = dir_.path() + "/bad.json";
  {
    std::ofstream file(json);
    file << R"({"arch": "sm_90a", "spec": ")" << kW4Spec << R"(",
               "layers": [{"name": "ok", "n": 512, "k": 512},
                          {"name": "bad", "n": 512, "k": 500}]})";
  }
  CommandResult mixed = Ctl({"prefetch", json});
  EXPECT_EQ(mixed.exit_code, 1) << mixed.output;
  EXPECT_NE(mixed.output.find("FAILED"), std::string::npos) << mixed.output;
  EXPECT_NE(mixed.output.find("shape.k"), std::string::npos) << mixed.output;
}

TEST_F(HummingctlTest, UsageErrorsExitTwoAndDaemonDownExitsOne) {
  EXPECT_EQ(Ctl({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(Ctl({"get", "--spec", kW4Spec}).exit_code, 2);
  CommandResult negative_abi =
      Ctl({"get", "--spec", kW4Spec, "--n", "4096", "--k", "4096", "--arch",
           "sm_90a", "--launch-abi", "-1"});
  EXPECT_EQ(negative_abi.exit_code, 2) << negative_abi.output;
  EXPECT_NE(negative_abi.output.find("launch-abi"), std::string::npos)
      << negative_abi.output;
  CommandResult down = Ctl({"stats"});
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_NE(down.output.find("unavailable"), std::string::npos) << down.output;
}

}  // namespace
}  // namespace hummingd::testing
