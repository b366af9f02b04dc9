// The table of record (issue 5's committed H200 results, named by
// HUMMINGD_TABLE_OF_RECORD) was measured on the kernels the planner chose
// then: this test holds the planner to them, so a planner change that moves
// any measured case fails here until a new table is measured and committed
// (bench/README.md). For every row of the table's JSON, decode and prefill
// alike, the plan's range for that M has the row's tile text and split
// count.

#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "kernels/planner.h"
#include "tests/unit/kernels/gemm/gemm_request.h"

namespace hummingd {
namespace {

struct TableRow {
  std::string spec;
  int64_t n = 0, k = 0, m = 0;
  std::string kernel;
  int64_t splits = 0;
};

// The bench's JSON (bench/kernel/gemm_bench.cc) writes one case per line
// with its keys in a fixed order.
std::vector<TableRow> ReadTableRows(const std::string& path) {
  std::ifstream in(path);
  std::vector<TableRow> rows;
  const std::regex row_pattern(
      R"re(\{"spec": "([^"]+)", "n": (\d+), "k": (\d+), "m": (\d+),.*"kernel": "([^"]*)", "splits": (\d+)\})re");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch match;
    if (!std::regex_search(line, match, row_pattern)) continue;
    TableRow row;
    row.spec = match[1];
    row.n = std::stoll(match[2]);
    row.k = std::stoll(match[3]);
    row.m = std::stoll(match[4]);
    row.kernel = match[5];
    row.splits = std::stoll(match[6]);
    rows.push_back(row);
  }
  return rows;
}

// The plan for the row's layer serves its M with the row's kernel and split
// count.
void ExpectPlannedAsMeasured(const TableRow& row) {
  absl::StatusOr<Plan> plan = PlanKernels(
      testing::GemmRequest(row.spec.c_str(), row.n, row.k, "sm_90a", 132));
  ASSERT_TRUE(plan.ok()) << plan.status();
  const PlanEntry* entry = plan->EntryFor(row.m);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->config.text, row.kernel);
  EXPECT_EQ(entry->launch.grid_z, row.splits);
}

TEST(DecodeTableOfRecordTest, PlansAreTheMeasuredKernels) {
  const std::vector<TableRow> rows = ReadTableRows(HUMMINGD_TABLE_OF_RECORD);
  // 6 layers x 4 specs x 7 token counts to 64, then M = 256, 1024, 4096 and
  // 8192 (the prefill planner's ranges).
  int decode_rows = 0, prefill_rows = 0;
  for (const TableRow& row : rows) {
    ++(row.m <= 64 ? decode_rows : prefill_rows);
    SCOPED_TRACE(::testing::Message() << row.spec << " N=" << row.n
                                      << " K=" << row.k << " M=" << row.m);
    ExpectPlannedAsMeasured(row);
  }
  EXPECT_EQ(decode_rows, 168) << HUMMINGD_TABLE_OF_RECORD;
  EXPECT_EQ(prefill_rows, 96) << HUMMINGD_TABLE_OF_RECORD;
}

}  // namespace
}  // namespace hummingd
