#pragma once

// KernelSetMemo: the hit path's shortcut. Maps the exact bytes of a
// GetKernels request (every field: clients of different launch_abi get
// different plans, and of different max_m different cuts of one plan) to the
// serialized response of an earlier call, so a repeated request costs one
// hash lookup and a reference-counted buffer copy instead of parsing,
// validation, key hashing, plan lookup and serialization.
// The memo never vouches for an artifact: before serving, the caller confirms
// each artifact the entry names is still in the store (a memory-tier lookup,
// which also keeps the store's LRU order honest).

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/byte_buffer.h"

namespace hummingd {

struct MemoizedKernelSet {
  grpc::ByteBuffer response;               // serialized GetKernelsResponse
  std::vector<std::string> artifact_keys;  // distinct, to confirm on a hit
  int64_t bytes = 0;
};

class KernelSetMemo {
 public:
  explicit KernelSetMemo(int64_t max_bytes) : max_bytes_(max_bytes) {}

  using EntryPtr = std::shared_ptr<const MemoizedKernelSet>;

  EntryPtr Lookup(const std::string& request_bytes);
  void Insert(const std::string& request_bytes, EntryPtr entry);
  void Erase(const std::string& request_bytes);

  int64_t bytes() const;
  int64_t entries() const;

 private:
  struct Slot {
    std::string key;
    EntryPtr entry;
    int64_t bytes = 0;
  };
  using Order = std::list<Slot>;

  void EraseLocked(Order::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const int64_t max_bytes_;
  mutable absl::Mutex mutex_;
  Order order_ ABSL_GUARDED_BY(mutex_);  // front = most recently used
  absl::flat_hash_map<std::string, Order::iterator> index_
      ABSL_GUARDED_BY(mutex_);
  int64_t bytes_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace hummingd
