#pragma once

// Weight codes in fragment order -> 16-bit MMA operand pairs, one register
// (two weights) at a time, for the GEMM skeletons that feed tensor cores
// from registers. Three paths compute the same numbers:
//
//  - Packed integer (uint4 / uint8 codes, implicit mid-point or integer
//    zero point, the scale stored in the activation type): the codes are
//    moved into the mantissa of a 16-bit "magic" power of two (LOP3 or
//    PRMT: no conversion instruction) and the magic plus the zero point is
//    subtracted with one packed FMA, giving q - z exactly in the
//    activation type.
//  - e4m3 with fp16 activations and fp16 scales (sm_89+): one hardware
//    conversion per pair (cvt.rn.f16x2.e4m3x2), exact.
//  - Generic (every other format): numeric/fragment_decode.cuh's fp32
//    decode, scale and pack, about three times the instructions.
//
// The two fast paths offer the operand before its scale (`unscaled_pair`,
// kUnscaledOperands): the wgmma skeleton then multiplies the scale into
// fp32 partial sums once per scale group instead of into every weight, so
// the only roundings are the tensor core's fp32 sums. `pair` applies the
// scale with one more packed FMA, rounding once exactly as the fp32 path
// does (a 16-bit times a short significand is exact in fp32).
//
// Lane words: pack/gemm_layout.cuh. Pair (j, r) of k-step `step` is codes
// 8 step + 4 j + 2 r and + 1: row g + 8 j, columns 16 step + 8 r + 2 t and
// + 1 of the unit.

#include "arch/platform.cuh"
#include "numeric/formats.cuh"
#include "numeric/fragment_decode.cuh"
#include "pack/gemm_layout.cuh"

namespace hummingd::device {

template <class Format>
struct PackedDecodePlan {
  static constexpr bool kActivation16 =
      Format::kActivationType == ScalarType::kFp16 ||
      Format::kActivationType == ScalarType::kBf16;
  static constexpr bool kBf16 = Format::kActivationType == ScalarType::kBf16;
  // bf16 holds integers exactly only up to 256: 128 + an 8-bit code is not
  // representable, so uint8 with bf16 activations stays on the fp32 path.
  static constexpr bool kEnabled =
      Format::kKind == CodeKind::kUint &&
      (Format::kBits == 4 || (Format::kBits == 8 && !kBf16)) &&
      (Format::kZero == ZeroKind::kNone ||
       Format::kZero == ZeroKind::kInteger) &&
      Format::kScaleType == Format::kActivationType && kActivation16;
  // The 16-bit power of two whose last ulp is 1: 1024 (fp16), 128 (bf16).
  static constexpr u32 kMagicHalf = kBf16 ? 0x4300u : 0x6400u;
  static constexpr float kMagicValue = kBf16 ? 128.0f : 1024.0f;
};

// cvt.rn.f16x2.e4m3x2 exists from sm_89.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
inline constexpr bool kHasCvtE4m3 = true;
#else
inline constexpr bool kHasCvtE4m3 = false;
#endif

template <class Format>
struct E4m3DecodePlan {
  static constexpr bool kEnabled =
      kHasCvtE4m3 && Format::kKind == CodeKind::kFloat &&
      Format::kExponentBits == 4 && Format::kMantissaBits == 3 &&
      Format::kZero == ZeroKind::kNone &&
      Format::kActivationType == ScalarType::kFp16 &&
      Format::kScaleType == ScalarType::kFp16;
};

enum class OperandPath : int { kGeneric, kPackedInt, kE4m3 };

template <class Format>
HUMMINGD_HD constexpr OperandPath operand_path_of() {
  return PackedDecodePlan<Format>::kEnabled ? OperandPath::kPackedInt
         : E4m3DecodePlan<Format>::kEnabled ? OperandPath::kE4m3
                                            : OperandPath::kGeneric;
}

#if defined(__CUDA_ARCH__)

// Bytes of (high:low) picked by kSelector's nibbles (PTX prmt: low holds
// bytes 0-3, high 4-7). The selector is an immediate.
template <u32 kSelector>
HUMMINGD_DEVICE u32 byte_permute(u32 low, u32 high) {
  u32 out;
  asm("prmt.b32 %0, %1, %2, %3;"
      : "=r"(out)
      : "r"(low), "r"(high), "n"(kSelector));
  return out;
}

// (a & b) | c in one LOP3.
HUMMINGD_DEVICE u32 and_or(u32 a, u32 b, u32 c) {
  u32 out;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(out) : "r"(a), "r"(b), "r"(c));
  return out;
}

template <bool kBf16>
HUMMINGD_DEVICE u32 fma_x2(u32 a, u32 b, u32 c) {
  u32 out;
  if constexpr (kBf16) {
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(out) : "r"(a), "r"(b), "r"(c));
  } else {
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(out) : "r"(a), "r"(b), "r"(c));
  }
  return out;
}

template <class Format, OperandPath kPath = operand_path_of<Format>()>
struct OperandDecoder;

// Packed path. Entry: the scale twice, and -(magic + z) twice.
template <class Format>
struct OperandDecoder<Format, OperandPath::kPackedInt> {
  static constexpr bool kUnscaledOperands = true;
  using Plan = PackedDecodePlan<Format>;
  static constexpr u32 kOne2 = Plan::kBf16 ? 0x3F803F80u : 0x3C003C00u;
  static constexpr u32 kSixteenth2 = 0x2C002C00u;  // fp16 1/16
  static constexpr u32 kNegZero2 = 0x80008000u;

  struct Entry {
    u32 scale2;
    u32 offset2;       // -(magic + z)
    u32 offset2_high;  // -(magic / 16 + z): read by fp16 4-bit odd registers
                       // only
  };

  // raw_scale: the 16-bit scale; raw_zero: the uint8 zero point (ignored
  // without one).
  HUMMINGD_DEVICE static Entry prepare(u32 raw_scale, u32 raw_zero) {
    const u32 scale = raw_scale & 0xFFFFu;
    Entry entry;
    entry.scale2 = scale | (scale << 16);
    if constexpr (Format::kZero == ZeroKind::kInteger) {
      set_zero_offsets(raw_zero & 0xFFu, entry);
      return entry;
    }
    // The implicit mid-point (float zero points take the generic path):
    // constants that ptxas folds into the centering FMA's immediate.
    constexpr float kZero = static_cast<float>(1u << (Format::kBits - 1));
    const float offset = -(Plan::kMagicValue + kZero);
    const float offset_high = -(Plan::kMagicValue / 16.0f + kZero);
    if constexpr (Plan::kBf16) {
      entry.offset2 = encode_bf16x2(offset, offset);
      entry.offset2_high = entry.offset2;
    } else {
      entry.offset2 = encode_fp16x2(offset, offset);
      entry.offset2_high = encode_fp16x2(offset_high, offset_high);
    }
    return entry;
  }

  // The offsets of a run-time zero point, built on their bits rather than
  // converted. fp16's 1024 has the last ulp 1, so the bits of -(1024 + z)
  // are -1024's plus z for every uint8 z, and -(64 + z) is that plus 960,
  // exact (an fp16 integer below 320): one IMAD and one HFMA2 where the
  // conversion chain (I2F, four FADDs, two F2FPs) cost seven, per row and
  // scale period in every zero-point k-loop; those loops run 2-13% fewer
  // instructions (decode-notes v126). bf16's 128 has the last ulp 1 too, so
  // -(128 + z) is -128's bits plus z, exact for z <= 128: every zero point a
  // 4-bit code can have (the packed path's only bf16 weights) and then some
  // (the reference draws them in [0, 16)); one IMAD where I2F, FADD and F2FP
  // were (decode-notes v130). Above 128, outside any 4-bit format, the sum
  // carries into the exponent and is no longer -(128 + z).
  HUMMINGD_DEVICE static void set_zero_offsets(u32 zero, Entry& entry) {
    if constexpr (Plan::kBf16) {
      static_assert(Plan::kMagicHalf == 0x4300u && Format::kBits == 4,
                    "bf16's magic is 128, for 4-bit codes");
      constexpr u32 kNegMagic2 = 0xC300C300u;  // -128, twice
      entry.offset2 = zero * 0x00010001u + kNegMagic2;
      entry.offset2_high = entry.offset2;
    } else {
      static_assert(Plan::kMagicHalf == 0x6400u, "fp16's magic is 1024");
      constexpr u32 kNegMagic2 = 0xE400E400u;                // -1024, twice
      constexpr u32 kFifteenSixteenthsMagic2 = 0x63806380u;  // 960, twice
      entry.offset2 = zero * 0x00010001u + kNegMagic2;
      // Only the odd registers of 4-bit codes read it (1024 + 16 q).
      entry.offset2_high =
          Format::kBits == 4
              ? fma_x2<false>(entry.offset2, kOne2, kFifteenSixteenthsMagic2)
              : entry.offset2;
    }
  }

  // q - z of a pair. r_words: the lane's words of the unit; step, j, r
  // compile-time.
  HUMMINGD_DEVICE static u32 unscaled_pair(const u32* r_words, int step, int j,
                                           int r, const Entry& entry) {
    u32 magic_codes;
    if constexpr (Format::kBits == 4) {
      // Word `step`, register q = 2j + r: nibbles q and q + 4 (the
      // interleaved order of pack/gemm_layout.cuh). fp16 lifts odd q in
      // place (0x00F0 masks: 16 x the code, undone by the centering FMA);
      // bf16 has only 7 mantissa bits, so it shifts them down instead.
      const u32 word = r_words[step];
      const int q = 2 * j + r;
      constexpr u32 kMagic2 = Plan::kMagicHalf | (Plan::kMagicHalf << 16);
      if constexpr (Plan::kBf16) {
        magic_codes = and_or(word >> (4 * q), 0x000F000Fu, kMagic2);
      } else {
        const u32 source = q >= 2 ? word >> 8 : word;
        magic_codes =
            and_or(source, (q & 1) != 0 ? 0x00F000F0u : 0x000F000Fu, kMagic2);
      }
    } else {
      // Word 2 step + j, bytes 2r and 2r + 1 (selector nibbles 4 + 2r and
      // 5 + 2r) under the magic's high byte (nibble 0). The magic is the
      // register operand and the selector the immediate: the other way
      // round (the word first, the magic as prmt's second source) ptxas
      // made the magic the immediate and loaded the selector into a
      // register before every PRMT, one more instruction per pair
      // (bench/decode-notes.md v96).
      const u32 word = r_words[2 * step + j];
      constexpr u32 kMagicHighBytes = (Plan::kMagicHalf >> 8) * 0x01010101u;
      magic_codes = r != 0 ? byte_permute<0x0706u>(kMagicHighBytes, word)
                           : byte_permute<0x0504u>(kMagicHighBytes, word);
    }
    if constexpr (Format::kBits == 4 && !Plan::kBf16) {
      // Odd registers hold 1024 + 16 q: scale by 1/16 (exact) first.
      return (r & 1) != 0
                 ? fma_x2<false>(magic_codes, kSixteenth2, entry.offset2_high)
                 : fma_x2<false>(magic_codes, kOne2, entry.offset2);
    } else {
      return fma_x2<Plan::kBf16>(magic_codes, kOne2, entry.offset2);
    }
  }

  // (q - z) * s of a pair, rounded once.
  HUMMINGD_DEVICE static u32 pair(const u32* r_words, int step, int j, int r,
                                  const Entry& entry) {
    return fma_x2<Plan::kBf16>(unscaled_pair(r_words, step, j, r, entry),
                               entry.scale2, kNegZero2);
  }
};

#if __CUDA_ARCH__ >= 890
// e4m3 path. Entry: the fp16 scale twice.
template <class Format>
struct OperandDecoder<Format, OperandPath::kE4m3> {
  // The hardware conversion yields the value itself: no exponent offset
  // may have been folded into the scale (prepare_fragment_scale).
  static_assert(!FragmentDecodePlan<Format>::kFoldOffsetIntoScale,
                "e4m3 scales carry no folded exponent offset");
  static constexpr bool kUnscaledOperands = true;
  struct Entry {
    u32 scale2;
  };

  HUMMINGD_DEVICE static Entry prepare(u32 raw_scale, u32) {
    const u32 scale = raw_scale & 0xFFFFu;
    return {scale | (scale << 16)};
  }

  // 8-bit stream order: word 2 step + j, bytes 2r (low half) and 2r + 1.
  HUMMINGD_DEVICE static u32 unscaled_pair(const u32* r_words, int step, int j,
                                           int r, const Entry&) {
    const u32 word = r_words[2 * step + j];
    const u16 codes = static_cast<u16>(r != 0 ? word >> 16 : word & 0xFFFFu);
    u32 halves;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(halves) : "h"(codes));
    return halves;
  }

  HUMMINGD_DEVICE static u32 pair(const u32* r_words, int step, int j, int r,
                                  const Entry& entry) {
    return fma_x2<false>(unscaled_pair(r_words, step, j, r, entry),
                         entry.scale2, 0x80008000u);
  }
};
#endif

// Generic path: fp32 decode (numeric/fragment_decode.cuh).
template <class Format>
struct OperandDecoder<Format, OperandPath::kGeneric> {
  static constexpr bool kUnscaledOperands = false;
  struct Entry {
    float scale;
    float zero;
  };

  // raw_scale / raw_zero: the scale and zero-point elements, zero-extended.
  HUMMINGD_DEVICE static Entry prepare(u32 raw_scale, u32 raw_zero) {
    using Decoder = typename Format::Decoder;
    Entry entry;
    entry.scale = prepare_fragment_scale<Format>(raw_scale);
    entry.zero = Decoder::prepare_zero(raw_zero);
    return entry;
  }

  HUMMINGD_DEVICE static u32 pair(const u32* r_words, int step, int j, int r,
                                  const Entry& entry) {
    const int code = 8 * step + 4 * j + 2 * r;
    constexpr int kBits = Format::kBits;
    const float lo = decode_scaled<Format>(
        extract_code<kBits>(r_words, gemm_code_slot(kBits, code)), entry.scale,
        entry.zero);
    const float hi = decode_scaled<Format>(
        extract_code<kBits>(r_words, gemm_code_slot(kBits, code + 1)),
        entry.scale, entry.zero);
    return pack_operand_pair<Format::kActivationType>(lo, hi);
  }
};

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
