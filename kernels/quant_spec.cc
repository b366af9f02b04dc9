#include "kernels/quant_spec.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"

namespace hummingd {
namespace {

// Limits on scale-tile sizes. The lower bound keeps a group at least one MMA
// k-slice wide; the upper bound keeps per-tile scale bookkeeping small and
// rejects absurd values before they reach arithmetic on shapes.
constexpr int kMinScaleTile = 16;
constexpr int kMaxScaleTile = 4096;

absl::Status Invalid(absl::string_view field, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", rule));
}

bool IsPowerOfTwo(int value) { return value > 0 && (value & (value - 1)) == 0; }

bool IsScaleTile(int value) {
  return IsPowerOfTwo(value) && value >= kMinScaleTile &&
         value <= kMaxScaleTile;
}

bool IsSixteenBit(DataType type) {
  return type == DataType::kFp16 || type == DataType::kBf16;
}

bool IsIntegerDataType(DataType type) {
  return type == DataType::kInt8 || type == DataType::kInt4;
}

// Width in bits of an activation element; 0 for types that are not
// activations.
int ActivationBits(DataType type) {
  switch (type) {
    case DataType::kFp16:
    case DataType::kBf16:
      return 16;
    case DataType::kE4m3:
    case DataType::kE5m2:
    case DataType::kInt8:
      return 8;
    case DataType::kInt4:
      return 4;
    default:
      return 0;
  }
}

std::string EnumValue(uint8_t value) {
  return absl::StrCat("unknown value ", static_cast<int>(value));
}

absl::Status ValidateWeight(const WeightType& weight) {
  switch (weight.kind) {
    case WeightKind::kUint:
      if (weight.bits < 1 || weight.bits > 8) {
        return Invalid("spec.weight.bits",
                       absl::StrCat("uint weights must have 1..8 bits (got ",
                                    weight.bits, ")"));
      }
      return absl::OkStatus();
    case WeightKind::kInt:
      if (weight.bits < 2 || weight.bits > 8) {
        return Invalid("spec.weight.bits",
                       absl::StrCat("int weights must have 2..8 bits (got ",
                                    weight.bits, ")"));
      }
      return absl::OkStatus();
    case WeightKind::kFloat:
      if (weight.exponent_bits < 1) {
        return Invalid("spec.weight.exponent_bits",
                       absl::StrCat("float weights need >= 1 exponent bit "
                                    "(got ",
                                    weight.exponent_bits, ")"));
      }
      if (weight.mantissa_bits < 0) {
        return Invalid(
            "spec.weight.mantissa_bits",
            absl::StrCat("must be >= 0 (got ", weight.mantissa_bits, ")"));
      }
      if (weight.bits < 2 || weight.bits > 8) {
        return Invalid("spec.weight.bits",
                       absl::StrCat("float weights must have 2..8 bits (got ",
                                    weight.bits, ")"));
      }
      // Compare in int64 so that absurd exponent/mantissa counts cannot
      // overflow the sum.
      if (int64_t{1} + weight.exponent_bits + weight.mantissa_bits !=
          weight.bits) {
        return Invalid(
            "spec.weight.bits",
            absl::StrCat("float weights need 1 + exponent_bits + "
                         "mantissa_bits == bits (got bits=",
                         weight.bits, ", exponent_bits=", weight.exponent_bits,
                         ", mantissa_bits=", weight.mantissa_bits, ")"));
      }
      return absl::OkStatus();
  }
  return Invalid("spec.weight.kind",
                 EnumValue(static_cast<uint8_t>(weight.kind)));
}

absl::Status ValidateGranularity(const QuantSpec& spec) {
  switch (spec.granularity) {
    case ScaleGranularity::kGroup:
      if (!IsScaleTile(spec.group_size)) {
        return Invalid("spec.group_size",
                       absl::StrCat("must be a power of two >= 16 and <= 4096 "
                                    "(got ",
                                    spec.group_size, ")"));
      }
      return absl::OkStatus();
    case ScaleGranularity::kBlock:
      if (!IsScaleTile(spec.block_n)) {
        return Invalid("spec.block_n",
                       absl::StrCat("must be a power of two >= 16 and <= 4096 "
                                    "(got ",
                                    spec.block_n, ")"));
      }
      if (!IsScaleTile(spec.block_k)) {
        return Invalid("spec.block_k",
                       absl::StrCat("must be a power of two >= 16 and <= 4096 "
                                    "(got ",
                                    spec.block_k, ")"));
      }
      return absl::OkStatus();
    case ScaleGranularity::kChannel:
    case ScaleGranularity::kTensor:
      return absl::OkStatus();
  }
  return Invalid("spec.granularity",
                 EnumValue(static_cast<uint8_t>(spec.granularity)));
}

absl::Status ValidateScaleType(DataType type) {
  switch (type) {
    case DataType::kFp16:
    case DataType::kBf16:
    case DataType::kFp32:
    case DataType::kE4m3:
    case DataType::kE5m2:
    case DataType::kUe8m0:
      return absl::OkStatus();
    default:
      return Invalid("spec.scale_type",
                     absl::StrCat("must be one of fp16, bf16, fp32, e4m3, "
                                  "e5m2, ue8m0 (got ",
                                  DataTypeName(type), ")"));
  }
}

absl::Status ValidateActivationAndOutput(const QuantSpec& spec) {
  if (ActivationBits(spec.activation_type) == 0) {
    return Invalid("spec.activation_type",
                   absl::StrCat("must be one of fp16, bf16, e4m3, e5m2, int8, "
                                "int4 (got ",
                                DataTypeName(spec.activation_type), ")"));
  }
  if (!IsSixteenBit(spec.output_type)) {
    return Invalid("spec.output_type",
                   absl::StrCat("must be fp16 or bf16 (got ",
                                DataTypeName(spec.output_type), ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateZeroPoint(const QuantSpec& spec) {
  switch (spec.zero_point) {
    case ZeroPointKind::kNone:
      return absl::OkStatus();
    case ZeroPointKind::kInteger:
    case ZeroPointKind::kFloat:
      if (spec.weight.kind != WeightKind::kUint) {
        return Invalid("spec.zero_point",
                       absl::StrCat("a zero point requires uint weights (got ",
                                    WeightTypeName(spec.weight), ")"));
      }
      // A float zero point is stored in the activation dtype and subtracted
      // in that precision; 8/4-bit activations cannot carry it.
      if (spec.zero_point == ZeroPointKind::kFloat &&
          !IsSixteenBit(spec.activation_type)) {
        return Invalid("spec.zero_point",
                       absl::StrCat("float zero point with non-16-bit "
                                    "activations (got ",
                                    DataTypeName(spec.activation_type), ")"));
      }
      return absl::OkStatus();
  }
  return Invalid("spec.zero_point",
                 EnumValue(static_cast<uint8_t>(spec.zero_point)));
}

absl::Status ValidateSecondaryScale(SecondaryScale secondary) {
  switch (secondary) {
    case SecondaryScale::kNone:
    case SecondaryScale::kTensor:
    case SecondaryScale::kChannel:
      return absl::OkStatus();
  }
  return Invalid("spec.secondary_scale",
                 EnumValue(static_cast<uint8_t>(secondary)));
}

// Rules that tie the weight type to the activation type: the MMA runs in the
// activation type, so decoded weights must fit into it exactly.
absl::Status ValidateWeightVsActivation(const QuantSpec& spec) {
  const int act_bits = ActivationBits(spec.activation_type);
  if (IsIntegerDataType(spec.activation_type) &&
      spec.weight.kind == WeightKind::kFloat) {
    return Invalid("spec.activation_type",
                   absl::StrCat(DataTypeName(spec.activation_type),
                                " activations require integer (uint/int) "
                                "weights (got ",
                                WeightTypeName(spec.weight), ")"));
  }
  if (act_bits <= 8 && spec.weight.bits > act_bits) {
    return Invalid(
        "spec.weight.bits",
        absl::StrCat("must not exceed the activation width for "
                     "8/4-bit activations (got ",
                     WeightTypeName(spec.weight), " weights with ",
                     DataTypeName(spec.activation_type), " activations)"));
  }
  if (spec.weight.kind == WeightKind::kFloat && spec.weight.exponent_bits > 5 &&
      spec.activation_type == DataType::kFp16) {
    return Invalid("spec.weight.exponent_bits",
                   absl::StrCat("float weights with more than 5 exponent bits "
                                "need non-fp16 activations; fp16 cannot hold "
                                "their range (got ",
                                WeightTypeName(spec.weight), ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateActivationScale(const QuantSpec& spec) {
  switch (spec.activation_scale) {
    case ActivationScaleMode::kNone:
    case ActivationScaleMode::kPerToken:
    case ActivationScaleMode::kPerGroup:
    case ActivationScaleMode::kTensor:
      break;
    default:
      return Invalid("spec.activation_scale",
                     EnumValue(static_cast<uint8_t>(spec.activation_scale)));
  }
  const bool sixteen = IsSixteenBit(spec.activation_type);
  if (sixteen && spec.activation_scale != ActivationScaleMode::kNone) {
    return Invalid(
        "spec.activation_scale",
        absl::StrCat("must be none for 16-bit activations (got ",
                     ActivationScaleModeName(spec.activation_scale), " with ",
                     DataTypeName(spec.activation_type), ")"));
  }
  if (!sixteen && spec.activation_scale == ActivationScaleMode::kNone) {
    return Invalid("spec.activation_scale",
                   absl::StrCat("must not be none for 8/4-bit activations "
                                "(got none with ",
                                DataTypeName(spec.activation_type), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

QuantSpec Canonicalize(const QuantSpec& spec) {
  QuantSpec out = spec;
  if (out.granularity != ScaleGranularity::kGroup) out.group_size = 0;
  if (out.granularity != ScaleGranularity::kBlock) {
    out.block_n = 0;
    out.block_k = 0;
  }
  if (out.weight.kind != WeightKind::kFloat) {
    out.weight.exponent_bits = 0;
    out.weight.mantissa_bits = 0;
  }
  return out;
}

absl::Status ValidateSpec(const QuantSpec& spec) {
  RETURN_IF_ERROR(ValidateWeight(spec.weight));
  RETURN_IF_ERROR(ValidateGranularity(spec));
  RETURN_IF_ERROR(ValidateScaleType(spec.scale_type));
  RETURN_IF_ERROR(ValidateActivationAndOutput(spec));
  RETURN_IF_ERROR(ValidateZeroPoint(spec));
  RETURN_IF_ERROR(ValidateSecondaryScale(spec.secondary_scale));
  RETURN_IF_ERROR(ValidateWeightVsActivation(spec));
  RETURN_IF_ERROR(ValidateActivationScale(spec));
  return absl::OkStatus();
}

std::string DataTypeName(DataType type) {
  switch (type) {
    case DataType::kFp16:
      return "fp16";
    case DataType::kBf16:
      return "bf16";
    case DataType::kFp32:
      return "fp32";
    case DataType::kE4m3:
      return "e4m3";
    case DataType::kE5m2:
      return "e5m2";
    case DataType::kUe8m0:
      return "ue8m0";
    case DataType::kInt8:
      return "int8";
    case DataType::kInt4:
      return "int4";
  }
  return absl::StrCat("dtype(", static_cast<int>(type), ")");
}

std::string WeightTypeName(const WeightType& type) {
  switch (type.kind) {
    case WeightKind::kUint:
      return absl::StrCat("uint", type.bits);
    case WeightKind::kInt:
      return absl::StrCat("int", type.bits);
    case WeightKind::kFloat:
      // The short eEmM form is canonical; the long form only shows up for
      // inconsistent specs so that error messages keep every field.
      if (int64_t{1} + type.exponent_bits + type.mantissa_bits == type.bits) {
        return absl::StrCat("e", type.exponent_bits, "m", type.mantissa_bits);
      }
      return absl::StrCat("float", type.bits, "e", type.exponent_bits, "m",
                          type.mantissa_bits);
  }
  return absl::StrCat("weight(", static_cast<int>(type.kind), ")");
}

std::string ZeroPointKindName(ZeroPointKind kind) {
  switch (kind) {
    case ZeroPointKind::kNone:
      return "none";
    case ZeroPointKind::kInteger:
      return "int";
    case ZeroPointKind::kFloat:
      return "float";
  }
  return absl::StrCat("zero(", static_cast<int>(kind), ")");
}

std::string SecondaryScaleName(SecondaryScale secondary) {
  switch (secondary) {
    case SecondaryScale::kNone:
      return "none";
    case SecondaryScale::kTensor:
      return "tensor";
    case SecondaryScale::kChannel:
      return "channel";
  }
  return absl::StrCat("scale2(", static_cast<int>(secondary), ")");
}

std::string ActivationScaleModeName(ActivationScaleMode mode) {
  switch (mode) {
    case ActivationScaleMode::kNone:
      return "none";
    case ActivationScaleMode::kPerToken:
      return "token";
    case ActivationScaleMode::kPerGroup:
      return "group";
    case ActivationScaleMode::kTensor:
      return "tensor";
  }
  return absl::StrCat("act_scale(", static_cast<int>(mode), ")");
}

int DataTypeBytes(DataType type) {
  switch (type) {
    case DataType::kFp32:
      return 4;
    case DataType::kFp16:
    case DataType::kBf16:
      return 2;
    case DataType::kE4m3:
    case DataType::kE5m2:
    case DataType::kUe8m0:
    case DataType::kInt8:
      return 1;
    case DataType::kInt4:
      // Half a byte; packed buffers hold two per byte. One is the storage of
      // a lone element.
      return 1;
  }
  return 0;
}

}  // namespace hummingd
