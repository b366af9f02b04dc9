#pragma once

// Reading code `index` from a little-endian bit stream held in registers:
// code i occupies bits [i*bits, (i+1)*bits), bit j being bit j%32 of word
// j/32. With `bits` and `index` compile-time constants (an unrolled loop),
// each code is one shift+mask, or one funnel shift when it straddles words.

#include "arch/bit_ops.cuh"
#include "arch/platform.cuh"

namespace hummingd::device {

template <int kBits>
HUMMINGD_HD u32 extract_code(const u32* r_words, int index) {
  static_assert(kBits >= 1 && kBits <= 8, "codes are 1..8 bits");
  constexpr u32 kMask = (1u << kBits) - 1u;
  const int first_bit = index * kBits;
  const int word = first_bit >> 5;
  const u32 shift = static_cast<u32>(first_bit & 31);
  if (shift + kBits <= 32u) return (r_words[word] >> shift) & kMask;
  return funnel_shift_right(r_words[word], r_words[word + 1], shift) & kMask;
}

}  // namespace hummingd::device
