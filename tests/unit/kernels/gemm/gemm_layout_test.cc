// The fragment layout: the CPU reference round-trips for every code width,
// agrees with the device's own coordinate functions, and the device repack
// (run on the host) is byte-identical to it.

#include "kernels/reference/gemm_layout.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reference/weight_packing.h"
#include "pack/gemm_layout.cuh"
#include "pack/repack_weights.cuh"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd {
namespace {

std::vector<uint8_t> RandomCodes(int64_t n, int64_t k, int bits,
                                 uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> codes(n * k);
  for (uint8_t& code : codes) code = static_cast<uint8_t>(rng() >> (64 - bits));
  return codes;
}

TEST(GemmLayoutTest, RepackRoundTripsForEveryWidth) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  for (int bits = 1; bits <= 8; ++bits) {
    for (auto [n, k] :
         {std::pair<int64_t, int64_t>{16, 64}, {48, 192}, {32, 320}}) {
      SCOPED_TRACE(::testing::Message()
                   << "bits=" << bits << " n=" << n << " k=" << k);
      const std::vector<uint8_t> codes = RandomCodes(n, k, bits, seed + bits);
      absl::StatusOr<std::vector<uint32_t>> packed =
          PackCodes(codes, n, k, bits);
      ASSERT_TRUE(packed.ok()) << packed.status();
      absl::StatusOr<std::vector<uint32_t>> fragments =
          RepackWeightsForGemm(*packed, n, k, bits);
      ASSERT_TRUE(fragments.ok()) << fragments.status();
      ASSERT_EQ(fragments->size(), packed->size());
      // A real permutation: the order changes for any nontrivial data.
      EXPECT_NE(*fragments, *packed);
      absl::StatusOr<std::vector<uint32_t>> back =
          UnrepackWeightsFromGemm(*fragments, n, k, bits);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(*back, *packed);
    }
  }
}

TEST(GemmLayoutTest, PositionsAreABijectionMatchingTheDeviceFunctions) {
  constexpr int64_t kN = 32;
  constexpr int64_t kK = 128;
  std::vector<int> hits(kN * kK, 0);
  for (int64_t row = 0; row < kN; ++row) {
    for (int64_t col = 0; col < kK; ++col) {
      const GemmFragmentPosition p = GemmFragmentPositionOf(row, col, kK);
      ASSERT_GE(p.lane, 0);
      ASSERT_LT(p.lane, 32);
      ASSERT_GE(p.code, 0);
      ASSERT_LT(p.code, 32);
      ++hits[(p.unit * 32 + p.lane) * 32 + p.code];
      const int64_t units_k = kK / 64;
      EXPECT_EQ((p.unit / units_k) * 16 + device::gemm_unit_row(p.lane, p.code),
                row);
      EXPECT_EQ((p.unit % units_k) * 64 + device::gemm_unit_col(p.lane, p.code),
                col);
    }
  }
  for (int count : hits) ASSERT_EQ(count, 1);
  // The fragment contract: lane 5 (g = 1, t = 1), code 2 (s 0, j 0, r 1,
  // h 0) is W[1][8 + 2].
  const GemmFragmentPosition p = GemmFragmentPositionOf(1, 10, kK);
  EXPECT_EQ(p.lane, 5);
  EXPECT_EQ(p.code, 2);
}

template <int kBits, int64_t kN, int64_t kK>
void ExpectDeviceRepackMatches(uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << "bits=" << kBits);
  const std::vector<uint8_t> codes = RandomCodes(kN, kK, kBits, seed);
  const std::vector<uint32_t> packed = *PackCodes(codes, kN, kK, kBits);
  const std::vector<uint32_t> expected =
      *RepackWeightsForGemm(packed, kN, kK, kBits);
  std::vector<uint32_t> got(packed.size(), 0xDEADBEEFu);
  RepackArgs args;
  args.checkpoint = packed.data();
  args.fragments = got.data();
  for (int64_t chunk = 0;
       chunk < device::RepackPlan<kBits, kN, kK>::kLaneChunks; ++chunk) {
    device::repack_lane_chunk<kBits, kN, kK>(args, chunk);
  }
  EXPECT_EQ(got, expected);
}

TEST(GemmLayoutTest, DeviceRepackIsByteIdenticalOnTheHost) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  ExpectDeviceRepackMatches<1, 32, 128>(seed);
  ExpectDeviceRepackMatches<2, 16, 192>(seed);
  ExpectDeviceRepackMatches<3, 48, 128>(seed);
  ExpectDeviceRepackMatches<4, 32, 256>(seed);
  ExpectDeviceRepackMatches<5, 16, 64>(seed);
  ExpectDeviceRepackMatches<6, 32, 192>(seed);
  ExpectDeviceRepackMatches<7, 16, 128>(seed);
  ExpectDeviceRepackMatches<8, 48, 64>(seed);
}

TEST(GemmLayoutTest, RefusesIllegalShapesNamingTheField) {
  const std::vector<uint32_t> words(16 * 96 * 4 / 32, 0);
  absl::StatusOr<std::vector<uint32_t>> bad_k =
      RepackWeightsForGemm(words, 16, 96, 4);
  EXPECT_EQ(bad_k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_k.status().message().find("gemm_layout.k"), std::string::npos);
  EXPECT_NE(RepackWeightsForGemm(words, 8, 192, 4)
                .status()
                .message()
                .find("gemm_layout.n"),
            std::string::npos);
  EXPECT_NE(RepackWeightsForGemm(words, 16, 128, 4)
                .status()
                .message()
                .find("gemm_layout.checkpoint"),
            std::string::npos);
  EXPECT_FALSE(RepackWeightsForGemm(words, 16, 64, 9).ok());
}

}  // namespace
}  // namespace hummingd
