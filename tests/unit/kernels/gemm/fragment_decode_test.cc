// The device fragment decode, run on the host: for every lane, unit and
// k-step, the B-operand registers decoded from the repacked weights (with
// the unit's scales and zero points) hold exactly the reference dequantized
// weight W[n][k] rounded to the activation type, at the (n, k) the mma
// fragment contract assigns to that register half.

#include "numeric/fragment_decode.cuh"

#include <cstdint>
#include <vector>

#include "gemm/wna16_config.cuh"
#include "gtest/gtest.h"
#include "kernels/reference/dequant_reference.h"
#include "kernels/reference/gemm_layout.h"
#include "memory/unit_scales.cuh"
#include "tests/unit/kernels/test_seed.h"

namespace hummingd {
namespace {

namespace hd = ::hummingd::device;

template <class Config>
void ExpectFragmentsMatchReference(const char* spec_text, uint64_t seed) {
  SCOPED_TRACE(spec_text);
  const QuantSpec spec = Canonicalize(*ParseSpecText(spec_text));
  LayerShape shape;
  shape.n = Config::kN;
  shape.k = Config::kK;
  const DequantInputs inputs = MakeRandomDequantInputs(spec, shape, seed);
  ASSERT_FALSE(inputs.weights.empty());
  const std::vector<float> w = *ReferenceDequantize(spec, shape, inputs);
  const std::vector<uint16_t> expected =
      *RoundToOutputBits(w, spec.activation_type);
  const std::vector<uint32_t> fragments =
      *RepackWeightsForGemm(inputs.weights, shape.n, shape.k, spec.weight.bits);
  constexpr int kBits = Config::kBits;
  int64_t checked = 0;
  int64_t mismatches = 0;
  for (int64_t nu = 0; nu < Config::kN / 16; ++nu) {
    for (int64_t ku = 0; ku < Config::kK / 64; ++ku) {
      const int64_t unit = nu * (Config::kK / 64) + ku;
      for (int lane = 0; lane < 32; ++lane) {
        const uint32_t* words = &fragments[(unit * 32 + lane) * kBits];
        hd::UnitScales<Config> scales;
        hd::load_unit_scales<Config>(inputs.scales.data(),
                                     inputs.zero_points.data(),
                                     nu * 16 + lane / 4, ku * 64, scales);
        for (int s = 0; s < 4; ++s) {
          const int e = hd::UnitScales<Config>::kEntriesK == 1 ? 0 : s;
          uint32_t b[2][2];
          hd::decode_fragment_step<typename Config::Format>(
              words, s, scales.scale[e], scales.zero[e], b);
          for (int j = 0; j < 2; ++j) {
            for (int r = 0; r < 2; ++r) {
              for (int h = 0; h < 2; ++h) {
                // b_r of n8 tile j: (k 16 s + 8 r + 2 t + h, n 8 j + g).
                const int64_t row = nu * 16 + 8 * j + lane / 4;
                const int64_t col =
                    ku * 64 + 16 * s + 8 * r + 2 * (lane % 4) + h;
                const uint16_t got = static_cast<uint16_t>(b[j][r] >> (16 * h));
                ++checked;
                if (got != expected[row * Config::kK + col] &&
                    ++mismatches <= 4) {
                  ADD_FAILURE()
                      << "(" << row << ", " << col << "): got 0x" << std::hex
                      << got << ", want 0x" << expected[row * Config::kK + col];
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, Config::kN * Config::kK);
  EXPECT_EQ(mismatches, 0);
}

using Tile = hd::GemmTile<16, 32, 64, 1, 2, 2>;

TEST(FragmentDecodeTest, RegistersHoldTheReferenceWeights) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  using Uint4Zero =
      hd::GemmFormat<hd::CodeKind::kUint, 4, 0, 0, hd::ScaleLayout::kGroup, 1,
                     64, hd::ScalarType::kFp16, hd::ZeroKind::kInteger,
                     hd::SecondaryKind::kNone, hd::ScalarType::kFp16,
                     hd::ScalarType::kFp16, false>;
  ExpectFragmentsMatchReference<hd::Wna16Config<Uint4Zero, Tile, 32, 128>>(
      "weight=uint4,group=64,scale=fp16,zero=int", seed);
  using Uint3 =
      hd::GemmFormat<hd::CodeKind::kUint, 3, 0, 0, hd::ScaleLayout::kGroup, 1,
                     32, hd::ScalarType::kFp32, hd::ZeroKind::kNone,
                     hd::SecondaryKind::kNone, hd::ScalarType::kBf16,
                     hd::ScalarType::kBf16, false>;
  ExpectFragmentsMatchReference<hd::Wna16Config<Uint3, Tile, 32, 192>>(
      "weight=uint3,group=32,scale=fp32,act=bf16,out=bf16", seed);
  using E2m1 =
      hd::GemmFormat<hd::CodeKind::kFloat, 4, 2, 1, hd::ScaleLayout::kGroup, 1,
                     16, hd::ScalarType::kE4m3, hd::ZeroKind::kNone,
                     hd::SecondaryKind::kNone, hd::ScalarType::kFp16,
                     hd::ScalarType::kFp16, false>;
  ExpectFragmentsMatchReference<hd::Wna16Config<E2m1, Tile, 32, 128>>(
      "weight=e2m1,group=16,scale=e4m3", seed);
  using E4m3Block =
      hd::GemmFormat<hd::CodeKind::kFloat, 8, 4, 3, hd::ScaleLayout::kBlock, 16,
                     64, hd::ScalarType::kFp32, hd::ZeroKind::kNone,
                     hd::SecondaryKind::kNone, hd::ScalarType::kBf16,
                     hd::ScalarType::kBf16, false>;
  ExpectFragmentsMatchReference<hd::Wna16Config<E4m3Block, Tile, 32, 128>>(
      "weight=e4m3,group=64x16,scale=fp32,act=bf16,out=bf16", seed);
  using Int8Channel =
      hd::GemmFormat<hd::CodeKind::kInt, 8, 0, 0, hd::ScaleLayout::kChannel, 0,
                     0, hd::ScalarType::kBf16, hd::ZeroKind::kNone,
                     hd::SecondaryKind::kNone, hd::ScalarType::kFp16,
                     hd::ScalarType::kFp16, false>;
  ExpectFragmentsMatchReference<hd::Wna16Config<Int8Channel, Tile, 32, 64>>(
      "weight=int8,group=channel,scale=bf16", seed);
}

}  // namespace
}  // namespace hummingd
