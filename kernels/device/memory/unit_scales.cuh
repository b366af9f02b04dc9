#pragma once

// Per-lane scales and zero terms for one weight unit (16 x 64, see
// pack/gemm_layout.cuh). Scales and zero points stay in the checkpoint
// layout (kernels/reference/dequant_reference.h); a lane needs rows
// row0 + 8 j (j = 0, 1) at the unit's four k16 steps, which share one entry
// when the scale tile spans >= 64 columns.

#include "arch/platform.cuh"
#include "memory/scalar_load.cuh"
#include "numeric/formats.cuh"
#include "numeric/fragment_decode.cuh"

namespace hummingd::device {

template <class Config>
struct UnitScales {
  static constexpr int kEntriesK = Config::kScaleTileK % 64 == 0 ? 1 : 4;
  float scale[kEntriesK][2];
  float zero[kEntriesK][2];
};

template <class Config>
HUMMINGD_HD void load_unit_scales(const void* g_scales, const void* g_zeros,
                                  i64 row0, i64 k0, UnitScales<Config>& r_out) {
  using Format = typename Config::Format;
  using Decoder = typename Format::Decoder;
  constexpr int kEntriesK = UnitScales<Config>::kEntriesK;
  HUMMINGD_UNROLL
  for (int e = 0; e < kEntriesK; ++e) {
    HUMMINGD_UNROLL
    for (int j = 0; j < 2; ++j) {
      const i64 row = row0 + 8 * j;
      const i64 entry = (row / Config::kScaleTileN) * Config::kScaleColumns +
                        (k0 + 16 * e) / Config::kScaleTileK;
      r_out.scale[e][j] = prepare_fragment_scale<Format>(
          load_scalar_raw<Format::kScaleType>(g_scales, entry));
      if constexpr (Format::kZero == ZeroKind::kInteger) {
        r_out.zero[e][j] =
            Decoder::prepare_zero(load_element_raw<1>(g_zeros, entry));
      } else if constexpr (Format::kZero == ZeroKind::kFloat) {
        r_out.zero[e][j] = Decoder::prepare_zero(
            load_scalar_raw<Format::kActivationType>(g_zeros, entry));
      } else {
        r_out.zero[e][j] = 0.0f;
      }
    }
  }
}

}  // namespace hummingd::device
