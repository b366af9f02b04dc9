#pragma once

// A byte-bounded LRU map of decoded, immutable records (shared_ptr<const V>):
// the cache-hit path returns a pointer instead of copying a cubin. Not
// synchronized; the store guards it with its own mutex.

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "cache/absl_view.h"

namespace hummingd::cache_internal {

template <typename V>
class MemoryTier {
 public:
  explicit MemoryTier(int64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // nullptr on a miss; a hit becomes the most recently used entry.
  std::shared_ptr<const V> Get(std::string_view key) {
    auto it = index_.find(ToAbsl(key));
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->value;
  }

  // Replaces any entry under `key`; evicts least recently used entries to fit
  // `charge` bytes. A value larger than the whole tier is not kept.
  void Put(std::string_view key, std::shared_ptr<const V> value,
           int64_t charge) {
    Erase(key);
    if (charge > capacity_) return;
    while (bytes_ + charge > capacity_ && !order_.empty()) {
      EraseNode(std::prev(order_.end()));
    }
    order_.push_front(Node{std::string(key), std::move(value), charge});
    index_.emplace(order_.front().key, order_.begin());
    bytes_ += charge;
  }

  void Erase(std::string_view key) {
    auto it = index_.find(ToAbsl(key));
    if (it != index_.end()) EraseNode(it->second);
  }

  void Clear() {
    index_.clear();
    order_.clear();
    bytes_ = 0;
  }

  int64_t bytes() const { return bytes_; }
  size_t size() const { return order_.size(); }

 private:
  struct Node {
    std::string key;
    std::shared_ptr<const V> value;
    int64_t charge = 0;
  };
  using NodeIterator = typename std::list<Node>::iterator;

  void EraseNode(NodeIterator node) {
    bytes_ -= node->charge;
    index_.erase(node->key);
    order_.erase(node);
  }

  int64_t capacity_;
  int64_t bytes_ = 0;
  std::list<Node> order_;  // front = most recently used
  absl::flat_hash_map<std::string, NodeIterator> index_;
};

}  // namespace hummingd::cache_internal
