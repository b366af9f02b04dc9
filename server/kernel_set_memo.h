#pragma once

// KernelSetMemo: the hit path's shortcut. Maps the exact bytes of a
// GetKernels request to the finished response of an earlier call whose
// kernels were all in the cache, so a repeated request costs one hash lookup
// and one copy instead of conversion, validation, two key hashes and plan
// lookups. The memo never vouches for an artifact: the caller confirms every
// artifact it names is still in the store (a memory-tier lookup, which also
// keeps the store's LRU order honest) before serving a memoized set.

#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "hummingd/v1/kernel_service.pb.h"

namespace hummingd {

class KernelSetMemo {
 public:
  explicit KernelSetMemo(int64_t max_bytes) : max_bytes_(max_bytes) {}

  using ResponsePtr = std::shared_ptr<const v1::GetKernelsResponse>;

  ResponsePtr Lookup(const std::string& request_bytes);
  void Insert(const std::string& request_bytes, ResponsePtr response);
  void Erase(const std::string& request_bytes);

  int64_t bytes() const;
  int64_t entries() const;

 private:
  struct Entry {
    std::string key;
    ResponsePtr response;
    int64_t bytes = 0;
  };
  using Order = std::list<Entry>;

  void EraseLocked(Order::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const int64_t max_bytes_;
  mutable absl::Mutex mutex_;
  Order order_ ABSL_GUARDED_BY(mutex_);  // front = most recently used
  absl::flat_hash_map<std::string, Order::iterator> index_
      ABSL_GUARDED_BY(mutex_);
  int64_t bytes_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace hummingd
