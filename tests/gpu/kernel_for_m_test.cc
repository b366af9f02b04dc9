// The M-range lookup a launch goes through (LoadedKernelSet::ForM), without
// a GPU: the kernel for an M, and an error naming KernelRequest.max_m when a
// set cut for it is asked for a larger M.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "kernels/plan.h"

namespace hummingd::gpu::testing {
namespace {

std::vector<LoadedKernel> Kernels(
    const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  std::vector<LoadedKernel> kernels;
  for (const auto& [m_min, m_max] : ranges) {
    LoadedKernel kernel;
    kernel.m_min = m_min;
    kernel.m_max = m_max;
    kernels.push_back(kernel);
  }
  return kernels;
}

// Decode ranges as a set served for max_m = 8 holds them when the plan
// splits its 8-token range at 5: [1, 5], [6, 8].
TEST(KernelForMTest, FindsTheRangeHoldingM) {
  const std::vector<LoadedKernel> kernels = Kernels({{1, 5}, {6, 8}});
  for (int64_t m = 1; m <= 8; ++m) {
    absl::StatusOr<const LoadedKernel*> found = KernelForM(kernels, 8, m);
    ASSERT_TRUE(found.ok()) << m << ": " << found.status();
    EXPECT_EQ(*found, &kernels[m <= 5 ? 0 : 1]) << m;
  }
}

TEST(KernelForMTest, AboveASetCutByMaxMNamesMaxM) {
  const std::vector<LoadedKernel> kernels = Kernels({{1, 8}, {9, 16}});
  absl::StatusOr<const LoadedKernel*> beyond = KernelForM(kernels, 12, 100);
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(beyond.status().message(),
            "m: 100 is outside the kernel set's M ranges [1, 16]: the kernel "
            "set was resolved with KernelRequest.max_m = 12, so it holds only "
            "the ranges serving M <= 12; resolve the layer with max_m >= 100 "
            "(or 0 for every range)");
  // The last range reaches past max_m: M up to its end is served.
  absl::StatusOr<const LoadedKernel*> past = KernelForM(kernels, 12, 16);
  ASSERT_TRUE(past.ok()) << past.status();
  EXPECT_EQ(*past, &kernels[1]);
}

// max_m is only named where it is why M is not served.
TEST(KernelForMTest, OtherMissesDoNotBlameMaxM) {
  const std::vector<LoadedKernel> kernels = Kernels({{1, 8}, {9, 16}});
  struct Case {
    uint32_t served_max_m;
    int64_t m;
  };
  // A whole set (0), M below the table, a max_m not below M.
  for (const Case& c : {Case{0, 17}, Case{8, 0}, Case{8, -3}, Case{64, 17}}) {
    absl::StatusOr<const LoadedKernel*> found =
        KernelForM(kernels, c.served_max_m, c.m);
    ASSERT_FALSE(found.ok()) << c.m;
    EXPECT_EQ(found.status().code(), absl::StatusCode::kOutOfRange);
    EXPECT_NE(found.status().message().find("M ranges [1, 16]"),
              std::string::npos)
        << found.status();
    EXPECT_EQ(found.status().message().find("max_m"), std::string::npos)
        << found.status();
  }
  EXPECT_EQ(MaxMNote(0, 64, 100), "");
  EXPECT_EQ(MaxMNote(100, 128, 100), "");
  EXPECT_NE(MaxMNote(99, 64, 100).find("KernelRequest.max_m = 99"),
            std::string::npos);
  // A max_m past the plan's last m_min cut nothing: the set reaches the
  // planner's end, and no max_m would serve an M beyond it.
  EXPECT_EQ(MaxMNote(5000, kDefaultMaxM, kDefaultMaxM + 1), "");
  EXPECT_FALSE(KernelForM({}, 0, 1).ok());
}

}  // namespace
}  // namespace hummingd::gpu::testing
