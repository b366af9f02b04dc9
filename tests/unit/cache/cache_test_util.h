#pragma once

// Helpers shared by the cache tests: a temp directory that removes itself and
// seeded random records (the seed is printed on failure via SCOPED_TRACE).

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "cache/records.h"
#include "gtest/gtest.h"

namespace hummingd::cache_test {

class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "hummingd_cache_XXXXXX";
    char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr) << "mkdtemp failed for " << pattern;
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline uint64_t FreshSeed() { return std::random_device{}(); }

inline std::string RandomBytes(std::mt19937_64& rng, size_t size) {
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(rng() & 0xFF);
  // Never all zeros: a zero-filled value would hide encoding mistakes.
  if (size > 0) bytes[0] = static_cast<char>(0xA5);
  return bytes;
}

inline std::string RandomText(std::mt19937_64& rng, size_t size) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789_=,";
  std::string text(size, 'a');
  for (char& c : text) c = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return text;
}

inline ArtifactRecord RandomArtifact(std::mt19937_64& rng, size_t cubin_bytes) {
  ArtifactRecord record;
  record.cubin = RandomBytes(rng, cubin_bytes);
  record.entry = "hummingd_" + RandomText(rng, 12);
  record.threads_per_block = 32 * static_cast<int>(1 + rng() % 32);
  record.dynamic_shared_memory = static_cast<int>(rng() % 200000);
  record.registers = static_cast<int>(rng() % 255);
  record.spills = static_cast<int>(rng() % 8);
  record.compile_ms = 1.0 + static_cast<double>(rng() % 100000) / 7.0;
  record.toolchain = "nvrtc-13.0";
  record.arch = "sm_90a";
  record.description = "dequant " + RandomText(rng, 40);
  return record;
}

inline PlanRecord RandomPlan(std::mt19937_64& rng, int entries) {
  PlanRecord plan;
  int64_t m = 1;
  for (int i = 0; i < entries; ++i) {
    PlanRecordEntry& entry = plan.entries.emplace_back();
    entry.m_min = m;
    entry.m_max = m + static_cast<int64_t>(rng() % 1000);
    m = entry.m_max + 1;
    entry.artifact_key = RandomText(rng, 64);
    entry.config.family = KernelFamily::kGemm;
    entry.config.skeleton = "gemm";
    entry.config.text = RandomText(rng, 30);
    entry.config.threads_per_block = 128;
    entry.config.dynamic_shared_memory = static_cast<int>(rng() % 100000);
    entry.launch.block_x = 128;
    entry.launch.grid_x = static_cast<int64_t>(1 + rng() % 1000);
    entry.launch.grid_y = static_cast<int64_t>(1 + rng() % 8);
    entry.launch.grid_z = static_cast<int64_t>(1 + rng() % 4);
    entry.launch.m_per_block_x = static_cast<int64_t>(rng() % 256);
    entry.launch.dynamic_shared_memory = entry.config.dynamic_shared_memory;
    entry.launch.workspace_bytes_per_m_block =
        static_cast<int64_t>(rng() % 65536);
    entry.launch.counter_bytes_per_m_block = static_cast<int64_t>(rng() % 256);
    entry.launch.programmatic_dependent_launch = (rng() & 1) != 0;
  }
  // A weight-preparation kernel, as GEMM plans carry.
  PlanRecordEntry& repack = plan.prepare.emplace_back(plan.entries.front());
  repack.role = "repack";
  repack.artifact_key = RandomText(rng, 64);
  repack.config.skeleton = "repack";
  repack.launch.m_per_block_x = 0;
  plan.description = "plan " + RandomText(rng, 20);
  return plan;
}

}  // namespace hummingd::cache_test
