// Integer codes through the magic-number decoders, exhaustively, against the
// reference: uint1..8 (raw, implicit mid-point, every integer zero point)
// and int2..8.

#include "numeric/int_decode.cuh"

#include <cstdint>

#include "gtest/gtest.h"
#include "kernels/quant_spec.h"
#include "kernels/reference/format_reference.h"
#include "numeric/weight_decode.cuh"

namespace hummingd {
namespace {

template <int kBits>
void CheckUint() {
  using Symmetric =
      device::WeightDecoder<device::CodeKind::kUint, kBits, 0, 0,
                            device::ZeroKind::kNone, device::ScalarType::kFp16>;
  using Zeroed = device::WeightDecoder<device::CodeKind::kUint, kBits, 0, 0,
                                       device::ZeroKind::kInteger,
                                       device::ScalarType::kFp16>;
  const WeightType type{WeightKind::kUint, kBits, 0, 0};
  const float midpoint = static_cast<float>(1u << (kBits - 1));
  for (uint32_t code = 0; code < (1u << kBits); ++code) {
    const float value = ReferenceDecodeWeightCode(type, code);
    ASSERT_EQ(device::decode_uint(code), value)
        << "uint" << kBits << " " << code;
    ASSERT_EQ(Symmetric::decode(code, Symmetric::prepare_zero(0)),
              value - midpoint)
        << "uint" << kBits << " code=" << code;
    ASSERT_EQ(Symmetric::decode_wide(code, 0.0f), value - midpoint);
    for (uint32_t zero = 0; zero < (1u << kBits); ++zero) {
      const float zero_term = Zeroed::prepare_zero(zero);
      ASSERT_EQ(Zeroed::decode(code, zero_term),
                value - static_cast<float>(zero))
          << "uint" << kBits << " code=" << code << " zero=" << zero;
    }
  }
}

template <int kBits>
void CheckInt() {
  using Decoder =
      device::WeightDecoder<device::CodeKind::kInt, kBits, 0, 0,
                            device::ZeroKind::kNone, device::ScalarType::kFp16>;
  const WeightType type{WeightKind::kInt, kBits, 0, 0};
  for (uint32_t code = 0; code < (1u << kBits); ++code) {
    const float value = ReferenceDecodeWeightCode(type, code);
    ASSERT_EQ(device::decode_int<kBits>(code), value)
        << "int" << kBits << " code=" << code;
    ASSERT_EQ(Decoder::decode(code, 0.0f), value);
    ASSERT_EQ(Decoder::decode_wide(code, 0.0f), value);
  }
}

TEST(IntDecodeTest, UintEveryWidthEveryCodeEveryZeroPoint) {
  CheckUint<1>();
  CheckUint<2>();
  CheckUint<3>();
  CheckUint<4>();
  CheckUint<5>();
  CheckUint<6>();
  CheckUint<7>();
  CheckUint<8>();
}

TEST(IntDecodeTest, IntEveryWidthEveryCode) {
  CheckInt<2>();
  CheckInt<3>();
  CheckInt<4>();
  CheckInt<5>();
  CheckInt<6>();
  CheckInt<7>();
  CheckInt<8>();
}

TEST(IntDecodeTest, ExtremesOfTwosComplement) {
  EXPECT_EQ(device::decode_int<8>(0x80), -128.0f);
  EXPECT_EQ(device::decode_int<8>(0x7F), 127.0f);
  EXPECT_EQ(device::decode_int<4>(0x8), -8.0f);
  EXPECT_EQ(device::decode_int<2>(0x3), -1.0f);
  EXPECT_EQ(device::decode_uint_midpoint<4>(0), -8.0f);
  EXPECT_EQ(device::decode_uint_midpoint<1>(1), 0.0f);
}

}  // namespace
}  // namespace hummingd
