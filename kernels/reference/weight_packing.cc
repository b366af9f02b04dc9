#include "kernels/reference/weight_packing.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/parallel_for.h"
#include "common/status_macros.h"

namespace hummingd {
namespace {

absl::Status ValidatePacking(int64_t n, int64_t k, int bits) {
  if (bits < 1 || bits > 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("packing.bits: must be 1..8 (got ", bits, ")"));
  }
  if (n <= 0 || k <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "packing.shape: N and K must be > 0 (got N=", n, ", K=", k, ")"));
  }
  if ((k * bits) % 32 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("packing.k: K*bits must be a multiple of 32 (got K=", k,
                     ", bits=", bits, ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateSize(absl::string_view field, size_t actual,
                          int64_t expected) {
  if (static_cast<int64_t>(actual) != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": expected ", expected, " elements (got ", actual, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t PackedWordsPerRow(int64_t k, int bits) { return k * bits / 32; }

// A code at a time through a 64-bit window of the row's stream: the
// benchmark packs whole layers (235 M codes for 28672 x 8192), where the
// bit-at-a-time form took seconds. UnpackCodes below stays bit-at-a-time,
// the contract's wording, and the round-trip tests hold the two together.
absl::StatusOr<std::vector<uint32_t>> PackCodes(
    const std::vector<uint8_t>& codes, int64_t n, int64_t k, int bits) {
  RETURN_IF_ERROR(ValidatePacking(n, k, bits));
  RETURN_IF_ERROR(ValidateSize("packing.codes", codes.size(), n * k));
  const int64_t words_per_row = PackedWordsPerRow(k, bits);
  std::vector<uint32_t> words(n * words_per_row, 0);
  for (int64_t row = 0; row < n; ++row) {
    uint32_t* row_word = &words[row * words_per_row];
    // Stream bits not yet stored, lowest first; K * bits is a multiple of
    // 32, so a row ends on a word boundary with none left.
    uint64_t pending = 0;
    int pending_bits = 0;
    for (int64_t i = 0; i < k; ++i) {
      const uint32_t code = codes[row * k + i];
      if (code >= (uint32_t{1} << bits)) {
        return absl::InvalidArgumentError(
            absl::StrCat("packing.codes: code ", code, " at (", row, ", ", i,
                         ") does not fit in ", bits, " bits"));
      }
      pending |= static_cast<uint64_t>(code) << pending_bits;
      pending_bits += bits;
      if (pending_bits >= 32) {
        *row_word++ = static_cast<uint32_t>(pending);
        pending >>= 32;
        pending_bits -= 32;
      }
    }
  }
  return words;
}

absl::StatusOr<std::vector<uint8_t>> UnpackCodes(
    const std::vector<uint32_t>& words, int64_t n, int64_t k, int bits) {
  RETURN_IF_ERROR(ValidatePacking(n, k, bits));
  const int64_t words_per_row = PackedWordsPerRow(k, bits);
  RETURN_IF_ERROR(
      ValidateSize("packing.words", words.size(), n * words_per_row));
  std::vector<uint8_t> codes(n * k, 0);
  // Rows are independent streams; whole layers go over the host's cores,
  // at least 64 K codes per thread.
  const int64_t min_rows = MinItemsPerWorker(k);
  ParallelFor(
      n,
      [&](int worker, int workers) {
        for (int64_t row = worker; row < n; row += workers) {
          const uint32_t* row_words = &words[row * words_per_row];
          for (int64_t i = 0; i < k; ++i) {
            uint32_t code = 0;
            for (int b = 0; b < bits; ++b) {
              const int64_t stream_bit = i * bits + b;
              const uint32_t bit =
                  (row_words[stream_bit / 32] >> (stream_bit % 32)) & 1u;
              code |= bit << b;
            }
            codes[row * k + i] = static_cast<uint8_t>(code);
          }
        }
      },
      min_rows);
  return codes;
}

}  // namespace hummingd
