#pragma once

// The prefetch loop shared by the daemon's Prefetch RPC and the embedded
// client: submit every item first, so the whole compile pool works on the
// manifest at once, then report the items in order as they complete. An
// item's error is reported and the others go on.

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/time/time.h"
#include "hummingd/v1/kernel_service.pb.h"
#include "server/kernel_resolver.h"
#include "server/proto_convert.h"

namespace hummingd {

// Most items one Prefetch request may carry: every item is parsed and
// begun before any is waited on, so the count bounds what one request makes
// the daemon hold. A model's manifest has tens to hundreds of layers.
inline constexpr int kMaxPrefetchItems = 4096;

struct PrefetchOutcome {
  int64_t items = 0;
  int64_t invalid = 0;   // items refused by validation
  bool stopped = false;  // `report` asked to stop
  // Items `keep_going` kept from being begun (not reported).
  int64_t not_begun = 0;
};

// `report` sees one message per item, in order; returning false stops the
// reporting (queued compiles still run and land in the cache). `keep_going`
// (optional) is asked before each item is begun: once it says no (the client
// went away, the daemon is shutting down), the items not yet begun are
// neither planned nor reported (PrefetchOutcome::not_begun counts them).
PrefetchOutcome RunPrefetch(
    KernelResolver& resolver, const RequestLimits& limits,
    const std::vector<const v1::KernelRequest*>& requests, absl::Time deadline,
    const std::function<bool(const v1::PrefetchProgress&)>& report,
    const std::function<bool()>& keep_going = nullptr);

}  // namespace hummingd
