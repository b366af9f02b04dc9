#include "server/served_ranges.h"

namespace hummingd {

uint32_t ServedMaxM(const KernelRequest& request) {
  return request.family == KernelFamily::kGemm ? request.max_m : 0;
}

std::vector<PlanRecordEntry> EntriesServingUpTo(
    const std::vector<PlanRecordEntry>& entries, uint32_t max_m) {
  if (max_m == 0) return entries;
  std::vector<PlanRecordEntry> served;
  for (const PlanRecordEntry& entry : entries) {
    if (entry.m_min <= static_cast<int64_t>(max_m)) served.push_back(entry);
  }
  return served;
}

}  // namespace hummingd
