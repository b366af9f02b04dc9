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
//
// 4-bit codes are interleaved inside each 8-code word: code c (0..7) of
// the word sits at nibble (c / 2) + 4 (c % 2), so that the pair (h = 0,
// h = 1) of operand register q = c / 2 lies at bits 4q and 4q + 16 — one
// LOP3 with 0x000F000F (or 0x00F000F0 for odd q) lifts both into the two
// halves of a 16-bit pair. Other widths keep the plain stream order.
// gemm_code_slot gives the stream position of a code.

#include "arch/platform.cuh"

namespace hummingd::device {

inline constexpr int kGemmUnitRows = 16;
inline constexpr int kGemmUnitCols = 64;
inline constexpr int kGemmCodesPerLane = 32;

// Stream position (in codes) of code `code` (0..31) of a lane.
HUMMINGD_HD constexpr int gemm_code_slot(int bits, int code) {
  return bits == 4 ? (code & ~7) | ((code & 7) >> 1) | ((code & 1) << 2) : code;
}

// Row (0..15) and column (0..63) inside the unit of code `code` of `lane`.
HUMMINGD_HD int gemm_unit_row(int lane, int code) {
  return 8 * ((code >> 2) & 1) + (lane >> 2);
}
HUMMINGD_HD int gemm_unit_col(int lane, int code) {
  return 16 * (code >> 3) + 8 * ((code >> 1) & 1) + 2 * (lane & 3) + (code & 1);
}

}  // namespace hummingd::device
