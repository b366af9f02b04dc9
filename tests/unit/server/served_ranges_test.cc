#include "server/served_ranges.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/launch_abi.h"
#include "kernels/planner.h"
#include "server/proto_convert.h"

namespace hummingd {
namespace {

PlanRecordEntry Range(int64_t m_min, int64_t m_max) {
  PlanRecordEntry entry;
  entry.m_min = m_min;
  entry.m_max = m_max;
  entry.artifact_key = absl::StrCat("key", m_min);
  entry.config.text = absl::StrCat("tile=", m_min);
  return entry;
}

using RangeList = std::vector<std::pair<int64_t, int64_t>>;

RangeList Ranges(const std::vector<PlanRecordEntry>& entries) {
  RangeList ranges;
  for (const PlanRecordEntry& entry : entries) {
    ranges.emplace_back(entry.m_min, entry.m_max);
  }
  return ranges;
}

// A decode + prefill table shaped like a Hopper plan's.
const std::vector<PlanRecordEntry> kTable = {
    Range(1, 8),   Range(9, 16),   Range(17, 32),
    Range(33, 64), Range(65, 128), Range(129, kDefaultMaxM)};

TEST(ServedRangesTest, KeepsExactlyTheEntriesStartingAtOrBelowMaxM) {
  struct Case {
    uint32_t max_m;
    RangeList kept;
  };
  const Case cases[] = {
      // 0: every range (the request without the field).
      {0, Ranges(kTable)},
      // Below the first range's m_max: the first range, whole.
      {1, {{1, 8}}},
      {5, {{1, 8}}},
      // At a range's m_max: nothing of the next one.
      {8, {{1, 8}}},
      // At a range's m_min: that range too.
      {9, {{1, 8}, {9, 16}}},
      // Inside a range.
      {20, {{1, 8}, {9, 16}, {17, 32}}},
      {64, {{1, 8}, {9, 16}, {17, 32}, {33, 64}}},
      {129, Ranges(kTable)},
      // Above everything.
      {std::numeric_limits<uint32_t>::max(), Ranges(kTable)},
  };
  for (const Case& c : cases) {
    const std::vector<PlanRecordEntry> kept =
        EntriesServingUpTo(kTable, c.max_m);
    EXPECT_EQ(Ranges(kept), c.kept) << "max_m=" << c.max_m;
    // The entries themselves, not copies with other fields.
    for (size_t i = 0; i < kept.size(); ++i) {
      EXPECT_EQ(kept[i], kTable[i]) << "max_m=" << c.max_m;
    }
  }
}

// On a real plan (W4 4096 x 4096 on Hopper: decode ranges, then 64-token
// steps of prefill tiles): the cut is a prefix, covers every M up to max_m,
// and holds nothing that serves only larger M.
TEST(ServedRangesTest, CutsARealPlanAtEveryMaxM) {
  v1::KernelRequest proto;
  proto.set_family(v1::KERNEL_FAMILY_GEMM);
  proto.mutable_spec()->set_text(
      "weight=uint4,group=128,scale=fp16,zero=none,act=fp16,out=fp16");
  proto.mutable_shape()->set_n(4096);
  proto.mutable_shape()->set_k(4096);
  proto.mutable_gpu()->set_arch("sm_90a");
  proto.set_launch_abi(kCurrentLaunchAbi);
  absl::StatusOr<KernelRequest> request =
      KernelRequestFromProto(proto, RequestLimits());
  ASSERT_TRUE(request.ok()) << request.status();
  absl::StatusOr<Plan> plan = PlanKernels(*request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<PlanRecordEntry> table;
  for (const PlanEntry& entry : plan->entries) {
    table.push_back(Range(entry.m_min, entry.m_max));
  }
  // Enough ranges that a decode-only max_m leaves most of them out.
  ASSERT_GE(table.size(), 6u);
  ASSERT_LE(table.front().m_max, 64);

  for (uint32_t max_m :
       {1u, 7u, 8u, 9u, 16u, 63u, 64u, 65u, 100u, 1000u, 4096u, 1u << 21}) {
    const std::vector<PlanRecordEntry> kept = EntriesServingUpTo(table, max_m);
    ASSERT_FALSE(kept.empty()) << max_m;
    ASSERT_LE(kept.size(), table.size());
    for (size_t i = 0; i < table.size(); ++i) {
      const bool serves_up_to_max_m = table[i].m_min <= max_m;
      EXPECT_EQ(i < kept.size(), serves_up_to_max_m)
          << "max_m=" << max_m << " range [" << table[i].m_min << ", "
          << table[i].m_max << "]";
      if (i < kept.size()) {
        EXPECT_EQ(kept[i], table[i]);
      }
    }
    EXPECT_GE(kept.back().m_max, std::min<int64_t>(max_m, kDefaultMaxM))
        << max_m;
  }
  EXPECT_LT(EntriesServingUpTo(table, 8).size(), table.size());
}

// Only GEMM sets are cut: a dequant set's one kernel serves every M.
TEST(ServedRangesTest, ServedMaxMIsTheRequestsForGemmOnly) {
  KernelRequest request;
  request.max_m = 8;
  request.family = KernelFamily::kGemm;
  EXPECT_EQ(ServedMaxM(request), 8u);
  request.family = KernelFamily::kDequant;
  EXPECT_EQ(ServedMaxM(request), 0u);
  request.family = KernelFamily::kGemm;
  request.max_m = 0;
  EXPECT_EQ(ServedMaxM(request), 0u);
}

}  // namespace
}  // namespace hummingd
