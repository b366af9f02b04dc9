#pragma once

// KernelRequest.max_m: which entries of a plan's M-range table a request is
// served. The plan (its key and cached record) is the same for every max_m;
// only the set cut from it differs, so requests with different max_m share
// the plan and every artifact they have in common.

#include <cstdint>
#include <vector>

#include "cache/records.h"
#include "kernels/plan.h"

namespace hummingd {

// The max_m a request's set is cut by, and echoes as KernelSet.max_m: the
// request's for GEMM; 0 (every range) for dequant, whose one kernel serves
// every M, so a dequant set never depends on it.
uint32_t ServedMaxM(const KernelRequest& request);

// The entries of an M-range table (sorted, contiguous) that serve some M in
// 1..max_m, i.e. those with m_min <= max_m; all of them when max_m is 0. The
// last entry kept keeps its own m_max (it may reach past max_m): its kernel
// and launch were planned for that whole range.
std::vector<PlanRecordEntry> EntriesServingUpTo(
    const std::vector<PlanRecordEntry>& entries, uint32_t max_m);

}  // namespace hummingd
