#include "kernels/reference/weight_packing.h"

#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd {
namespace {

TEST(WeightPackingTest, FourBitCodesFillNibblesLowFirst) {
  std::vector<uint8_t> codes(32);
  for (int i = 0; i < 32; ++i) codes[i] = static_cast<uint8_t>((i + 1) % 16);
  absl::StatusOr<std::vector<uint32_t>> words = PackCodes(codes, 1, 32, 4);
  ASSERT_TRUE(words.ok()) << words.status();
  ASSERT_EQ(words->size(), 4u);
  EXPECT_EQ((*words)[0], 0x87654321u);
  EXPECT_EQ((*words)[1], 0x0FEDCBA9u);
  EXPECT_EQ((*words)[2], 0x87654321u);
}

TEST(WeightPackingTest, EightBitCodesAreLittleEndianBytes) {
  std::vector<uint8_t> codes(32, 0x11);
  codes[0] = 0xAA;
  codes[1] = 0xBB;
  codes[2] = 0xCC;
  codes[3] = 0xDD;
  absl::StatusOr<std::vector<uint32_t>> words = PackCodes(codes, 1, 32, 8);
  ASSERT_TRUE(words.ok());
  EXPECT_EQ((*words)[0], 0xDDCCBBAAu);
  EXPECT_EQ((*words)[1], 0x11111111u);
}

TEST(WeightPackingTest, ThreeBitCodeStraddlesWords) {
  // Code 10 of a row occupies stream bits 30..32: two bits in word 0, one in
  // word 1.
  std::vector<uint8_t> codes(2 * 32, 0);
  codes[32 + 10] = 0x5;  // row 1: bit 30 set, bit 31 clear, bit 32 set
  codes[32 + 11] = 0x7;  // stream bits 33..35
  absl::StatusOr<std::vector<uint32_t>> words = PackCodes(codes, 2, 32, 3);
  ASSERT_TRUE(words.ok());
  ASSERT_EQ(words->size(), 6u);  // 3 words per row
  EXPECT_EQ((*words)[0], 0u);
  EXPECT_EQ((*words)[3], 1u << 30);
  EXPECT_EQ((*words)[4], 0x1u | (0x7u << 1));
  EXPECT_EQ((*words)[5], 0u);
}

TEST(WeightPackingTest, OneBitCodes) {
  std::vector<uint8_t> codes(32);
  for (int i = 0; i < 32; ++i) codes[i] = i % 2;
  absl::StatusOr<std::vector<uint32_t>> words = PackCodes(codes, 1, 32, 1);
  ASSERT_TRUE(words.ok());
  EXPECT_EQ((*words)[0], 0xAAAAAAAAu);
}

// An independent packer in the contract's own words, one stream bit at a
// time (PackCodes itself goes a code at a time through a 64-bit window).
std::vector<uint32_t> PackBitByBit(const std::vector<uint8_t>& codes, int64_t n,
                                   int64_t k, int bits) {
  const int64_t words_per_row = k * bits / 32;
  std::vector<uint32_t> words(n * words_per_row, 0);
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t i = 0; i < k; ++i) {
      for (int b = 0; b < bits; ++b) {
        if (((codes[row * k + i] >> b) & 1u) == 0) continue;
        const int64_t stream_bit = i * bits + b;
        words[row * words_per_row + stream_bit / 32] |= uint32_t{1}
                                                        << (stream_bit % 32);
      }
    }
  }
  return words;
}

TEST(WeightPackingTest, RoundTripsRandomCodesForEveryWidth) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::mt19937_64 rng(seed);
  for (int bits = 1; bits <= 8; ++bits) {
    SCOPED_TRACE(bits);
    for (int64_t k : {32, 96, 256}) {
      const int64_t n = 3;
      std::vector<uint8_t> codes(n * k);
      for (uint8_t& c : codes) c = static_cast<uint8_t>(rng() % (1u << bits));
      codes[0] = static_cast<uint8_t>((1u << bits) - 1);  // never all zero
      absl::StatusOr<std::vector<uint32_t>> words =
          PackCodes(codes, n, k, bits);
      ASSERT_TRUE(words.ok()) << words.status();
      ASSERT_EQ(static_cast<int64_t>(words->size()),
                n * PackedWordsPerRow(k, bits));
      EXPECT_EQ(*words, PackBitByBit(codes, n, k, bits));
      absl::StatusOr<std::vector<uint8_t>> unpacked =
          UnpackCodes(*words, n, k, bits);
      ASSERT_TRUE(unpacked.ok()) << unpacked.status();
      EXPECT_EQ(*unpacked, codes);
    }
  }
}

TEST(WeightPackingTest, RejectsBadInput) {
  const std::vector<uint8_t> codes(32, 1);
  EXPECT_EQ(PackCodes(codes, 1, 32, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PackCodes(codes, 1, 32, 9).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PackCodes(codes, 2, 32, 4).status().code(),
            absl::StatusCode::kInvalidArgument);  // size mismatch
  EXPECT_EQ(PackCodes(std::vector<uint8_t>(20, 1), 1, 20, 3).status().code(),
            absl::StatusCode::kInvalidArgument);  // 60 bits per row
  std::vector<uint8_t> too_big(32, 1);
  too_big[5] = 16;
  absl::Status status = PackCodes(too_big, 1, 32, 4).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("packing.codes"), std::string::npos);
  EXPECT_EQ(UnpackCodes(std::vector<uint32_t>(3, 0), 1, 32, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hummingd
