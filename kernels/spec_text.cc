// The compact text form of a QuantSpec (quant_spec.h): parse and format.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "kernels/quant_spec.h"

namespace hummingd {
namespace {

// Every key, in the order FormatSpecText writes them.
constexpr std::array<absl::string_view, 9> kKeys = {
    "weight", "group",     "scale", "zero", "scale2",
    "act",    "act_scale", "out",   "bias"};

constexpr std::array<DataType, 8> kDataTypes = {
    DataType::kFp16, DataType::kBf16,  DataType::kFp32, DataType::kE4m3,
    DataType::kE5m2, DataType::kUe8m0, DataType::kInt8, DataType::kInt4};

absl::Status Malformed(absl::string_view key, absl::string_view value,
                       absl::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("spec text: key '", key, "': malformed value '", value,
                   "' (expected ", expected, ")"));
}

// Decimal digits only (no sign, no spaces), at most `max_digits` so that the
// result always fits in an int.
std::optional<int> ParseDigits(absl::string_view text, int max_digits) {
  if (text.empty() || static_cast<int>(text.size()) > max_digits) {
    return std::nullopt;
  }
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// Splits a leading run of digits off `text`.
absl::string_view TakeDigits(absl::string_view& text) {
  size_t end = 0;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  absl::string_view digits = text.substr(0, end);
  text.remove_prefix(end);
  return digits;
}

bool ConsumePrefix(absl::string_view& text, absl::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// Parses "eEmM" (the whole of `text`) into exponent and mantissa bit counts.
bool ParseExponentMantissa(absl::string_view text, int* exponent,
                           int* mantissa) {
  if (!ConsumePrefix(text, "e")) return false;
  std::optional<int> e = ParseDigits(TakeDigits(text), 2);
  if (!e || !ConsumePrefix(text, "m")) return false;
  std::optional<int> m = ParseDigits(text, 2);
  if (!m) return false;
  *exponent = *e;
  *mantissa = *m;
  return true;
}

absl::Status ParseWeight(absl::string_view value, WeightType* weight) {
  constexpr absl::string_view kExpected =
      "uintN, intN, floatNeEmM or eEmM with 1+E+M <= 8";
  absl::string_view rest = value;
  if (ConsumePrefix(rest, "uint") || ConsumePrefix(rest, "int")) {
    std::optional<int> bits = ParseDigits(rest, 2);
    if (!bits) return Malformed("weight", value, kExpected);
    weight->kind = value[0] == 'u' ? WeightKind::kUint : WeightKind::kInt;
    weight->bits = *bits;
    weight->exponent_bits = 0;
    weight->mantissa_bits = 0;
    return absl::OkStatus();
  }
  int exponent = 0;
  int mantissa = 0;
  int bits = 0;
  if (ConsumePrefix(rest, "float")) {
    std::optional<int> total = ParseDigits(TakeDigits(rest), 2);
    if (!total || !ParseExponentMantissa(rest, &exponent, &mantissa) ||
        *total != 1 + exponent + mantissa) {
      return Malformed("weight", value, kExpected);
    }
    bits = *total;
  } else {
    if (!ParseExponentMantissa(rest, &exponent, &mantissa) ||
        1 + exponent + mantissa > 8) {
      return Malformed("weight", value, kExpected);
    }
    bits = 1 + exponent + mantissa;
  }
  weight->kind = WeightKind::kFloat;
  weight->bits = bits;
  weight->exponent_bits = exponent;
  weight->mantissa_bits = mantissa;
  return absl::OkStatus();
}

absl::Status ParseGroup(absl::string_view value, QuantSpec* spec) {
  constexpr absl::string_view kExpected =
      "a group size N, channel, tensor or a KxN block";
  if (value == "channel") {
    spec->granularity = ScaleGranularity::kChannel;
    return absl::OkStatus();
  }
  if (value == "tensor") {
    spec->granularity = ScaleGranularity::kTensor;
    return absl::OkStatus();
  }
  absl::string_view rest = value;
  std::optional<int> first = ParseDigits(TakeDigits(rest), 9);
  if (!first) return Malformed("group", value, kExpected);
  if (rest.empty()) {
    spec->granularity = ScaleGranularity::kGroup;
    spec->group_size = *first;
    return absl::OkStatus();
  }
  if (!ConsumePrefix(rest, "x")) return Malformed("group", value, kExpected);
  std::optional<int> second = ParseDigits(rest, 9);
  if (!second) return Malformed("group", value, kExpected);
  spec->granularity = ScaleGranularity::kBlock;
  spec->block_k = *first;
  spec->block_n = *second;
  return absl::OkStatus();
}

absl::Status ParseDataType(absl::string_view key, absl::string_view value,
                           DataType* type) {
  for (DataType candidate : kDataTypes) {
    if (value == DataTypeName(candidate)) {
      *type = candidate;
      return absl::OkStatus();
    }
  }
  return Malformed(key, value,
                   "fp16, bf16, fp32, e4m3, e5m2, ue8m0, int8 or int4");
}

// Parses one of a closed set of enum tokens, using the enum's name function
// so that the text form and the names can never drift apart.
template <typename Enum, size_t kCount>
absl::Status ParseToken(absl::string_view key, absl::string_view value,
                        const std::array<Enum, kCount>& candidates,
                        std::string (*name)(Enum), Enum* out) {
  std::string expected;
  for (Enum candidate : candidates) {
    const std::string candidate_name = name(candidate);
    if (value == candidate_name) {
      *out = candidate;
      return absl::OkStatus();
    }
    absl::StrAppend(&expected, expected.empty() ? "" : " | ", candidate_name);
  }
  return Malformed(key, value, expected);
}

absl::Status ParseValue(absl::string_view key, absl::string_view value,
                        QuantSpec* spec) {
  if (key == "weight") return ParseWeight(value, &spec->weight);
  if (key == "group") return ParseGroup(value, spec);
  if (key == "scale") return ParseDataType(key, value, &spec->scale_type);
  if (key == "act") return ParseDataType(key, value, &spec->activation_type);
  if (key == "out") return ParseDataType(key, value, &spec->output_type);
  if (key == "zero") {
    return ParseToken<ZeroPointKind, 3>(
        key, value,
        {ZeroPointKind::kNone, ZeroPointKind::kInteger, ZeroPointKind::kFloat},
        &ZeroPointKindName, &spec->zero_point);
  }
  if (key == "scale2") {
    return ParseToken<SecondaryScale, 3>(
        key, value,
        {SecondaryScale::kNone, SecondaryScale::kTensor,
         SecondaryScale::kChannel},
        &SecondaryScaleName, &spec->secondary_scale);
  }
  if (key == "act_scale") {
    return ParseToken<ActivationScaleMode, 4>(
        key, value,
        {ActivationScaleMode::kNone, ActivationScaleMode::kPerToken,
         ActivationScaleMode::kPerGroup, ActivationScaleMode::kTensor},
        &ActivationScaleModeName, &spec->activation_scale);
  }
  if (key == "bias") {
    if (value != "0" && value != "1") return Malformed(key, value, "0 or 1");
    spec->has_bias = value == "1";
    return absl::OkStatus();
  }
  // Unreachable: keys are checked against kKeys first.
  return absl::InternalError(
      absl::StrCat("spec text: no parser for '", key, "'"));
}

std::string GroupText(const QuantSpec& spec) {
  switch (spec.granularity) {
    case ScaleGranularity::kGroup:
      return absl::StrCat(spec.group_size);
    case ScaleGranularity::kChannel:
      return "channel";
    case ScaleGranularity::kTensor:
      return "tensor";
    case ScaleGranularity::kBlock:
      return absl::StrCat(spec.block_k, "x", spec.block_n);
  }
  return absl::StrCat("granularity(", static_cast<int>(spec.granularity), ")");
}

}  // namespace

absl::StatusOr<QuantSpec> ParseSpecText(std::string_view text_view) {
  // This Abseil build has its own string_view type; convert once here.
  const absl::string_view text(text_view.data(), text_view.size());
  QuantSpec spec;
  if (absl::StripAsciiWhitespace(text).empty()) return Canonicalize(spec);

  std::array<bool, kKeys.size()> seen{};
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) {
      return absl::InvalidArgumentError(
          "spec text: empty item (stray ',' in the text)");
    }
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "spec text: item '", item, "' is not of the form key=value"));
    }
    const absl::string_view key =
        absl::StripAsciiWhitespace(item.substr(0, eq));
    const absl::string_view value =
        absl::StripAsciiWhitespace(item.substr(eq + 1));
    size_t index = 0;
    while (index < kKeys.size() && kKeys[index] != key) ++index;
    if (index == kKeys.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec text: unknown key '", key,
                       "' (known: ", absl::StrJoin(kKeys, ", "), ")"));
    }
    if (seen[index]) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec text: duplicate key '", key, "'"));
    }
    seen[index] = true;
    if (value.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec text: empty value for key '", key, "'"));
    }
    RETURN_IF_ERROR(ParseValue(key, value, &spec));
  }
  return Canonicalize(spec);
}

std::string FormatSpecText(const QuantSpec& spec) {
  return absl::StrCat(
      "weight=", WeightTypeName(spec.weight), ",group=", GroupText(spec),
      ",scale=", DataTypeName(spec.scale_type),
      ",zero=", ZeroPointKindName(spec.zero_point),
      ",scale2=", SecondaryScaleName(spec.secondary_scale),
      ",act=", DataTypeName(spec.activation_type),
      ",act_scale=", ActivationScaleModeName(spec.activation_scale),
      ",out=", DataTypeName(spec.output_type), ",bias=", spec.has_bias ? 1 : 0);
}

}  // namespace hummingd
