#pragma once

// The GEMM weight layout ("fragment order"); kernels/reference/gemm_layout.h
// is the host-side definition and CPU reference. W (N x K) is cut into units
// of 16 rows x 64 columns; units are stored n-unit major, k-unit minor
// (unit (nu, ku) is unit number nu * (K / 64) + ku). Inside a unit, lane l
// (0..31) of a warp owns 32 codes stored as one little-endian bit stream of
// `bits` words (code i at stream bits [i*bits, (i+1)*bits)), lanes one after
// another: unit u, lane l, word w is word (u * 32 + l) * bits + w.
// Code i = ((s * 2 + j) * 2 + r) * 2 + h of lane l (g = l / 4, t = l % 4) is
// W[16 nu + 8 j + g][64 ku + 16 s + 8 r + 2 t + h]: for k-step s and n-half
// j, codes (r, h) are exactly the mma B fragment b_r = {h = 0, h = 1} of
// m16n8k16, so a lane's words decode straight into operand registers.

#include "arch/platform.cuh"

namespace hummingd::device {

inline constexpr int kGemmUnitRows = 16;
inline constexpr int kGemmUnitCols = 64;
inline constexpr int kGemmCodesPerLane = 32;

// Row (0..15) and column (0..63) inside the unit of code `code` of `lane`.
HUMMINGD_HD int gemm_unit_row(int lane, int code) {
  return 8 * ((code >> 2) & 1) + (lane >> 2);
}
HUMMINGD_HD int gemm_unit_col(int lane, int code) {
  return 16 * (code >> 3) + 8 * ((code >> 1) & 1) + 2 * (lane & 3) + (code & 1);
}

}  // namespace hummingd::device
