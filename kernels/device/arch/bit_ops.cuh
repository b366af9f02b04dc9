#pragma once

// Bit-level helpers that map to one SASS instruction on the device.

#include "arch/platform.cuh"

namespace hummingd::device {

// Low 32 bits of the 64-bit value (hi:lo) shifted right by `shift` (0..31):
// a code that straddles two words of a bit stream in one SHF.
HUMMINGD_HD u32 funnel_shift_right(u32 lo, u32 hi, u32 shift) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(lo, hi, shift);
#else
  shift &= 31u;
  return shift == 0 ? lo : (lo >> shift) | (hi << (32u - shift));
#endif
}

}  // namespace hummingd::device
