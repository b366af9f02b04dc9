#include "kernels/gpu_target.h"

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace hummingd {
namespace {

TEST(ParseGpuArchTest, AcceptsEverySupportedArch) {
  struct Case {
    const char* text;
    int sm;
    bool arch_specific;
  };
  for (const Case& c : {Case{"sm_75", 75, false}, Case{"sm_80", 80, false},
                        Case{"sm_86", 86, false}, Case{"sm_87", 87, false},
                        Case{"sm_89", 89, false}, Case{"sm_90", 90, false},
                        Case{"sm_90a", 90, true}, Case{"sm_100", 100, false},
                        Case{"sm_100a", 100, true}, Case{"sm_120", 120, false},
                        Case{"sm_120a", 120, true}}) {
    absl::StatusOr<GpuTarget> target = ParseGpuArch(c.text);
    ASSERT_TRUE(target.ok()) << c.text << ": " << target.status();
    EXPECT_EQ(target->sm, c.sm) << c.text;
    EXPECT_EQ(target->arch_specific, c.arch_specific) << c.text;
    EXPECT_EQ(target->ArchName(), c.text);
  }
}

TEST(ParseGpuArchTest, RejectsEverythingElse) {
  for (const char* text :
       {"sm_70", "sm_72", "sm_89a", "sm_80a", "sm_90b", "SM_90", "sm90", "sm_",
        "", " sm_90", "sm_90 ", "compute_90", "sm_1000", "sm_9"}) {
    absl::StatusOr<GpuTarget> target = ParseGpuArch(text);
    ASSERT_FALSE(target.ok()) << text;
    EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(target.status().message()).rfind("gpu.arch:", 0), 0u)
        << target.status();
  }
}

TEST(GpuTargetTest, ArchNameSpellsSuffix) {
  GpuTarget target;
  target.sm = 89;
  EXPECT_EQ(target.ArchName(), "sm_89");
  target.sm = 90;
  target.arch_specific = true;
  EXPECT_EQ(target.ArchName(), "sm_90a");
}

}  // namespace
}  // namespace hummingd
