#pragma once

// Where a KernelClient gets kernel sets from: the node daemon or the
// in-process pipeline. Both produce the same KernelSet for the same request.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hummingd/v1/kernel_service.pb.h"

namespace hummingd::client {

using PrefetchCallback = std::function<void(const v1::PrefetchProgress&)>;

class KernelSource {
 public:
  virtual ~KernelSource() = default;

  virtual absl::StatusOr<v1::KernelSet> Resolve(
      const v1::KernelRequest& request) = 0;

  // Every item runs; returns the first item error.
  virtual absl::Status Prefetch(const std::vector<v1::KernelRequest>& requests,
                                const PrefetchCallback& progress) = 0;

  // For logs: "daemon socket=/run/…" / "embedded cache_dir=…".
  virtual std::string Describe() const = 0;
};

// The first failed item of a prefetch as a status ("prefetch item 3
// (qkv_proj): …"); OK when the item succeeded.
absl::Status PrefetchItemStatus(const v1::PrefetchProgress& progress);

}  // namespace hummingd::client
