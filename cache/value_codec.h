#pragma once

// The checksummed envelope every stored value lives in:
//
//   offset  size  field
//   0       4     magic "HMKV"
//   4       2     format version (kValueFormatVersion), little-endian
//   6       2     value type (ValueType), little-endian
//   8       4     payload length in bytes, little-endian
//   12      8     Checksum64(payload), little-endian
//   20      n     payload
//
// Any single changed byte or truncation fails OpenValue: header bytes are
// checked field by field, payload bytes by the checksum and the length.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "cache/byte_io.h"

namespace hummingd::cache_internal {

inline constexpr uint16_t kValueFormatVersion = 1;
inline constexpr size_t kValueHeaderBytes = 20;

// Stable on-disk integers: never renumber.
enum class ValueType : uint16_t {
  kArtifact = 1,
  kPlan = 2,
  kArtifactMeta = 3,
  kSchemaMarker = 4,
};

// Builds a value in place so that a large payload (a cubin) is copied once:
// reserve the header, append the payload to writer(), then Seal().
class ValueBuilder {
 public:
  explicit ValueBuilder(ValueType type);
  ByteWriter& writer() { return writer_; }
  std::string Seal() &&;

 private:
  ValueType type_;
  ByteWriter writer_;
};

// Verifies the envelope and returns a view of the payload inside `value`.
// DATA_LOSS with the reason ("checksum mismatch", "truncated", …) otherwise.
absl::StatusOr<std::string_view> OpenValue(ValueType expected,
                                           std::string_view value);

}  // namespace hummingd::cache_internal
