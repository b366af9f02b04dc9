#pragma once

// Damage to a store's SST files the way a bad disk or a partial copy does it:
// one flipped byte in a data block, or a file cut short. Both act on the
// directory's largest SST, where flushed artifacts live.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace hummingd::cache_test {

// The largest .sst file of `directory`, or "" (with a test failure) if none
// holds at least `min_bytes`.
inline std::string LargestSstFile(const std::string& directory,
                                  uintmax_t min_bytes) {
  std::string largest;
  uintmax_t largest_size = 0;
  for (const auto& file : std::filesystem::directory_iterator(directory)) {
    if (file.path().extension() == ".sst" && file.file_size() > largest_size) {
      largest_size = file.file_size();
      largest = file.path().string();
    }
  }
  if (largest_size < min_bytes) {
    ADD_FAILURE() << "no SST of at least " << min_bytes << " bytes in "
                  << directory << " (were the artifacts flushed?)";
    return "";
  }
  return largest;
}

// Flips one byte a third of the way into `path` (inside a data block, which
// RocksDB's block checksum covers).
inline void FlipByteInside(const std::string& path) {
  const auto size = std::filesystem::file_size(path);
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(file.is_open()) << path;
  const auto offset = static_cast<std::streamoff>(size / 3);
  char byte = 0;
  file.seekg(offset);
  file.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x5A);
  file.seekp(offset);
  file.write(&byte, 1);
  ASSERT_TRUE(file.good()) << path;
}

// Cuts `path` to half its size.
inline void TruncateToHalf(const std::string& path) {
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
}

}  // namespace hummingd::cache_test
