#pragma once

// Loads of one scale / zero-point element of a given dtype, zero-extended
// into a u32 for numeric/scale_decode.cuh. Elements are tiny and reused by a
// whole chunk, so a plain read-only scalar load is the right size.

#include "arch/platform.cuh"
#include "numeric/formats.cuh"

namespace hummingd::device {

template <int kBytes>
HUMMINGD_HD u32 load_element_raw(const void* g_base, i64 index) {
  if constexpr (kBytes == 1) {
    return static_cast<const u8*>(g_base)[index];
  } else if constexpr (kBytes == 2) {
    return static_cast<const u16*>(g_base)[index];
  } else {
    static_assert(kBytes == 4, "elements are 1, 2 or 4 bytes");
    return static_cast<const u32*>(g_base)[index];
  }
}

template <ScalarType kType>
HUMMINGD_HD u32 load_scalar_raw(const void* g_base, i64 index) {
  return load_element_raw<ScalarTraits<kType>::kBytes>(g_base, index);
}

}  // namespace hummingd::device
