#include "server/kernel_set_memo.h"

#include <iterator>
#include <utility>

namespace hummingd {

KernelSetMemo::EntryPtr KernelSetMemo::Lookup(
    const std::string& request_bytes) {
  absl::MutexLock lock(&mutex_);
  auto it = index_.find(request_bytes);
  if (it == index_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->entry;
}

void KernelSetMemo::Insert(const std::string& request_bytes, EntryPtr entry) {
  const int64_t slot_bytes =
      static_cast<int64_t>(request_bytes.size()) + entry->bytes;
  if (slot_bytes > max_bytes_) return;
  absl::MutexLock lock(&mutex_);
  if (auto it = index_.find(request_bytes); it != index_.end()) {
    EraseLocked(it->second);
  }
  order_.push_front(Slot{request_bytes, std::move(entry), slot_bytes});
  index_.emplace(request_bytes, order_.begin());
  bytes_ += slot_bytes;
  while (bytes_ > max_bytes_ && !order_.empty()) {
    EraseLocked(std::prev(order_.end()));
  }
}

void KernelSetMemo::Erase(const std::string& request_bytes) {
  absl::MutexLock lock(&mutex_);
  if (auto it = index_.find(request_bytes); it != index_.end()) {
    EraseLocked(it->second);
  }
}

void KernelSetMemo::EraseLocked(Order::iterator it) {
  bytes_ -= it->bytes;
  index_.erase(it->key);
  order_.erase(it);
}

int64_t KernelSetMemo::bytes() const {
  absl::MutexLock lock(&mutex_);
  return bytes_;
}

int64_t KernelSetMemo::entries() const {
  absl::MutexLock lock(&mutex_);
  return static_cast<int64_t>(index_.size());
}

}  // namespace hummingd
