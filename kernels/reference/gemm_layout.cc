#include "kernels/reference/gemm_layout.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "common/status_macros.h"
#include "kernels/reference/weight_packing.h"
#include "pack/gemm_layout.cuh"

namespace hummingd {
namespace {

constexpr int64_t kUnitRows = 16;
constexpr int64_t kUnitCols = 64;
constexpr int kLanes = 32;
constexpr int kCodesPerLane = 32;

// Bit-at-a-time stream access: the definition, not a fast path.
uint32_t ReadCode(const uint32_t* stream, int64_t index, int bits) {
  uint32_t code = 0;
  for (int b = 0; b < bits; ++b) {
    const int64_t bit = index * bits + b;
    code |= ((stream[bit / 32] >> (bit % 32)) & 1u) << b;
  }
  return code;
}

void WriteCode(uint32_t* stream, int64_t index, int bits, uint32_t code) {
  for (int b = 0; b < bits; ++b) {
    const int64_t bit = index * bits + b;
    if (((code >> b) & 1u) != 0) stream[bit / 32] |= uint32_t{1} << (bit % 32);
  }
}

absl::Status CheckWords(const char* field, size_t actual, int64_t expected) {
  if (static_cast<int64_t>(actual) != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": expected ", expected, " words (got ", actual, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

GemmFragmentPosition GemmFragmentPositionOf(int64_t row, int64_t col,
                                            int64_t k) {
  const int64_t dr = row % kUnitRows;
  const int64_t dc = col % kUnitCols;
  const int j = static_cast<int>(dr / 8);
  const int g = static_cast<int>(dr % 8);
  const int s = static_cast<int>(dc / 16);
  const int r = static_cast<int>((dc % 16) / 8);
  const int t = static_cast<int>((dc % 8) / 2);
  const int h = static_cast<int>(dc % 2);
  GemmFragmentPosition position;
  position.unit = (row / kUnitRows) * (k / kUnitCols) + col / kUnitCols;
  position.lane = 4 * g + t;
  position.code = ((s * 2 + j) * 2 + r) * 2 + h;
  return position;
}

absl::Status ValidateGemmWeightShape(int64_t n, int64_t k, int bits) {
  if (bits < 1 || bits > 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("gemm_layout.bits: must be 1..8 (got ", bits, ")"));
  }
  if (n <= 0 || n % kUnitRows != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gemm_layout.n: must be a positive multiple of 16 (got ", n, ")"));
  }
  if (k <= 0 || k % kUnitCols != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gemm_layout.k: must be a positive multiple of 64 (got ", k, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint32_t>> RepackWeightsForGemm(
    const std::vector<uint32_t>& checkpoint, int64_t n, int64_t k, int bits) {
  RETURN_IF_ERROR(ValidateGemmWeightShape(n, k, bits));
  const int64_t words_per_row = PackedWordsPerRow(k, bits);
  RETURN_IF_ERROR(CheckWords("gemm_layout.checkpoint", checkpoint.size(),
                             n * words_per_row));
  std::vector<uint32_t> fragments(checkpoint.size(), 0);
  // Each 16-row block fills its own units (GemmFragmentPositionOf), so the
  // blocks go to threads whole: a real layer took seconds on one core.
  const int64_t row_blocks = n / kUnitRows;
  const int64_t min_blocks = MinItemsPerWorker(kUnitRows * k);
  ParallelFor(
      row_blocks,
      [&](int worker, int workers) {
        for (int64_t block = worker; block < row_blocks; block += workers) {
          for (int64_t row = block * kUnitRows; row < (block + 1) * kUnitRows;
               ++row) {
            for (int64_t col = 0; col < k; ++col) {
              const uint32_t code =
                  ReadCode(&checkpoint[row * words_per_row], col, bits);
              const GemmFragmentPosition p =
                  GemmFragmentPositionOf(row, col, k);
              WriteCode(&fragments[(p.unit * kLanes + p.lane) * bits],
                        device::gemm_code_slot(bits, p.code), bits, code);
            }
          }
        }
      },
      min_blocks);
  return fragments;
}

absl::StatusOr<std::vector<uint32_t>> UnrepackWeightsFromGemm(
    const std::vector<uint32_t>& fragments, int64_t n, int64_t k, int bits) {
  RETURN_IF_ERROR(ValidateGemmWeightShape(n, k, bits));
  const int64_t words_per_row = PackedWordsPerRow(k, bits);
  RETURN_IF_ERROR(
      CheckWords("gemm_layout.fragments", fragments.size(), n * words_per_row));
  std::vector<uint32_t> checkpoint(fragments.size(), 0);
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t col = 0; col < k; ++col) {
      const GemmFragmentPosition p = GemmFragmentPositionOf(row, col, k);
      const uint32_t code =
          ReadCode(&fragments[(p.unit * kLanes + p.lane) * bits],
                   device::gemm_code_slot(bits, p.code), bits);
      WriteCode(&checkpoint[row * words_per_row], col, bits, code);
    }
  }
  return checkpoint;
}

static_assert(kCodesPerLane * kLanes == kUnitRows * kUnitCols,
              "a unit is 32 lanes x 32 codes");

}  // namespace hummingd
