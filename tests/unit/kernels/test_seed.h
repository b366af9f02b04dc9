#pragma once

// Fresh random data every run: a seed from std::random_device, or the value
// of HUMMINGD_TEST_SEED to replay a failure. Tests SCOPED_TRACE the seed so
// that a failure prints it.

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

namespace hummingd::testing {

inline uint64_t TestSeed() {
  if (const char* fixed = std::getenv("HUMMINGD_TEST_SEED")) {
    return std::strtoull(fixed, nullptr, 0);
  }
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

inline std::string SeedTrace(uint64_t seed) {
  return "seed=" + std::to_string(seed) +
         " (replay with HUMMINGD_TEST_SEED=" + std::to_string(seed) + ")";
}

}  // namespace hummingd::testing
