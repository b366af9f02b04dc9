#pragma once

// The quantization spec: what a layer's weights, scales, zero points and
// activations are. Plain data, no gRPC or protobuf; the server converts its
// wire message into this and back.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hummingd {

// Element types used for scales, activations and outputs.
enum class DataType : uint8_t {
  kFp16 = 1,
  kBf16 = 2,
  kFp32 = 3,
  kE4m3 = 4,   // fp8, OCP "fn" variant: no inf, NaN = S.1111.111
  kE5m2 = 5,   // fp8, IEEE-like: inf and NaN at exponent 31
  kUe8m0 = 6,  // unsigned power of two 2^(x-127), 0xFF = NaN (MX scales)
  kInt8 = 7,
  kInt4 = 8,
};

// How the weight codes are interpreted.
enum class WeightKind : uint8_t {
  kUint = 1,   // unsigned integer code, 1..8 bits
  kInt = 2,    // two's-complement signed integer code, 2..8 bits
  kFloat = 3,  // sign + exponent_bits + mantissa_bits, total <= 8
};

struct WeightType {
  WeightKind kind = WeightKind::kUint;
  int bits = 4;           // total bits per code, 1..8
  int exponent_bits = 0;  // kFloat only
  int mantissa_bits = 0;  // kFloat only

  bool operator==(const WeightType&) const = default;
};

// Where one scale applies. Sizes are in elements of the weight matrix, whose
// logical shape is (N rows = output features, K columns = input features).
enum class ScaleGranularity : uint8_t {
  kGroup = 1,    // one scale per (row, group of group_size along K)
  kChannel = 2,  // one scale per row (output channel)
  kBlock = 3,    // one scale per (block_n x block_k) tile (DeepSeek FP8)
  kTensor = 4,   // one scale for the whole matrix
};

enum class ZeroPointKind : uint8_t {
  kNone = 1,     // uint: implicit mid-point 2^(bits-1); int/float: no offset
  kInteger = 2,  // uint8 code per scale entry: w = (q - z) * s
  kFloat = 3,    // float (activation dtype) per scale entry: w = (q - z) * s
};

enum class SecondaryScale : uint8_t {
  kNone = 1,
  kTensor = 2,   // one fp32 multiplier (e.g. NVFP4 global scale)
  kChannel = 3,  // one fp32 multiplier per row
};

enum class ActivationScaleMode : uint8_t {
  kNone = 1,      // 16-bit activations carry no scale
  kPerToken = 2,  // dynamic, one fp32 scale per row of X
  kPerGroup = 3,  // dynamic, one fp32 scale per (row, group along K)
  kTensor = 4,    // static, one fp32 scale
};

struct QuantSpec {
  WeightType weight;
  ScaleGranularity granularity = ScaleGranularity::kGroup;
  int group_size = 128;  // kGroup only
  int block_n = 0;       // kBlock only
  int block_k = 0;       // kBlock only
  DataType scale_type = DataType::kFp16;
  ZeroPointKind zero_point = ZeroPointKind::kNone;
  SecondaryScale secondary_scale = SecondaryScale::kNone;
  DataType activation_type = DataType::kFp16;
  ActivationScaleMode activation_scale = ActivationScaleMode::kNone;
  DataType output_type = DataType::kFp16;
  bool has_bias = false;

  bool operator==(const QuantSpec&) const = default;
};

// Canonical form: fields that do not apply to the chosen options are reset to
// fixed values (e.g. group_size when granularity != kGroup), so that two specs
// meaning the same thing compare equal and hash equal.
QuantSpec Canonicalize(const QuantSpec& spec);

// Validates the spec on its own (no shape). Errors are INVALID_ARGUMENT naming
// the field and the rule, e.g. "spec.group_size: must be a power of two >= 16
// (got 100)".
absl::Status ValidateSpec(const QuantSpec& spec);

// Compact text form used by the CLI, manifests and logs, e.g.
//   weight=uint4,group=128,scale=fp16,zero=int,act=fp16,out=bf16
// Keys: weight (uintN | intN | floatNeEmM | eEmM with 1+E+M <= 8, e.g. e4m3,
// e5m2, e2m1, e3m2, e2m3; floats are written back as eEmM),
// group (N | channel | tensor | a block as block_k x block_n, e.g. 128x128),
// scale (dtype), zero (none | int | float), scale2 (none | tensor | channel),
// act (dtype), act_scale (none | token | group | tensor), out (fp16 | bf16),
// bias (0 | 1). Omitted keys take the QuantSpec defaults; whitespace around
// keys and values is ignored. Unknown, duplicate or empty keys and malformed
// values are INVALID_ARGUMENT naming the key. Returns the canonical spec but
// does not validate it (call ValidateSpec).
absl::StatusOr<QuantSpec> ParseSpecText(std::string_view text);
// Inverse of ParseSpecText for a canonical spec; every key is written, in a
// fixed order, so the text is itself canonical.
std::string FormatSpecText(const QuantSpec& spec);

// Names for single enum values (the tokens used in the text form).
std::string DataTypeName(DataType type);
std::string WeightTypeName(const WeightType& type);
// none | int | float
std::string ZeroPointKindName(ZeroPointKind kind);
// none | tensor | channel
std::string SecondaryScaleName(SecondaryScale secondary);
// none | token | group | tensor
std::string ActivationScaleModeName(ActivationScaleMode mode);

// Byte size of one element of a scale / activation / output data type.
int DataTypeBytes(DataType type);

}  // namespace hummingd
