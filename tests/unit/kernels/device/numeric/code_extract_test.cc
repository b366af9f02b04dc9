// extract_code against the reference packer: every width, random codes,
// every position of a row (straddling codes included).

#include "numeric/code_extract.cuh"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reference/weight_packing.h"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd {
namespace {

template <int kBits>
void CheckWidth(uint64_t seed) {
  constexpr int64_t kRows = 3;
  constexpr int64_t kCols = 32 * 5;
  std::mt19937_64 rng(seed + kBits);
  std::vector<uint8_t> codes(kRows * kCols);
  for (uint8_t& code : codes)
    code = static_cast<uint8_t>(rng() % (1u << kBits));
  absl::StatusOr<std::vector<uint32_t>> words =
      PackCodes(codes, kRows, kCols, kBits);
  ASSERT_TRUE(words.ok()) << words.status();
  const int64_t words_per_row = kCols * kBits / 32;
  for (int64_t row = 0; row < kRows; ++row) {
    for (int64_t chunk = 0; chunk < kCols / 32; ++chunk) {
      const uint32_t* r_words =
          words->data() + row * words_per_row + chunk * kBits;
      for (int i = 0; i < 32; ++i) {
        ASSERT_EQ(device::extract_code<kBits>(r_words, i),
                  codes[row * kCols + chunk * 32 + i])
            << "bits=" << kBits << " row=" << row << " chunk=" << chunk
            << " i=" << i;
      }
    }
  }
}

TEST(CodeExtractTest, MatchesReferencePackingForEveryWidth) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  CheckWidth<1>(seed);
  CheckWidth<2>(seed);
  CheckWidth<3>(seed);
  CheckWidth<4>(seed);
  CheckWidth<5>(seed);
  CheckWidth<6>(seed);
  CheckWidth<7>(seed);
  CheckWidth<8>(seed);
}

TEST(CodeExtractTest, FunnelShiftJoinsWords) {
  EXPECT_EQ(device::funnel_shift_right(0x80000000u, 0x5u, 31), 0xBu);
  EXPECT_EQ(device::funnel_shift_right(0x12345678u, 0x9ABCDEF0u, 0),
            0x12345678u);
  EXPECT_EQ(device::funnel_shift_right(0x12345678u, 0x9ABCDEF0u, 8),
            0xF0123456u);
}

}  // namespace
}  // namespace hummingd
