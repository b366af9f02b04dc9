#include "cache/value_codec.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/hashing.h"

namespace hummingd::cache_internal {
namespace {

constexpr char kMagic[4] = {'H', 'M', 'K', 'V'};

void StoreLittleEndian(char* out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) {
    out[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  }
}

}  // namespace

ValueBuilder::ValueBuilder(ValueType type) : type_(type) {
  writer_.buffer().assign(kValueHeaderBytes, '\0');
}

std::string ValueBuilder::Seal() && {
  std::string value = writer_.Release();
  const std::string_view payload =
      std::string_view(value).substr(kValueHeaderBytes);
  char* header = value.data();
  std::memcpy(header, kMagic, sizeof(kMagic));
  StoreLittleEndian(header + 4, kValueFormatVersion, 2);
  StoreLittleEndian(header + 6, static_cast<uint16_t>(type_), 2);
  StoreLittleEndian(header + 8, payload.size(), 4);
  StoreLittleEndian(header + 12, Checksum64(payload), 8);
  return value;
}

absl::StatusOr<std::string_view> OpenValue(ValueType expected,
                                           std::string_view value) {
  if (value.size() < kValueHeaderBytes) {
    return absl::DataLossError(
        absl::StrCat("value: truncated header (", value.size(), " bytes)"));
  }
  if (std::memcmp(value.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError("value: bad magic");
  }
  ByteReader header(
      value.substr(sizeof(kMagic), kValueHeaderBytes - sizeof(kMagic)));
  uint16_t version = 0;
  uint16_t type = 0;
  uint32_t length = 0;
  uint64_t checksum = 0;
  header.U16(&version);
  header.U16(&type);
  header.U32(&length);
  header.U64(&checksum);
  if (version != kValueFormatVersion) {
    return absl::DataLossError(
        absl::StrCat("value: unknown format version ", version));
  }
  if (type != static_cast<uint16_t>(expected)) {
    return absl::DataLossError(absl::StrCat("value: type ", type, " where ",
                                            static_cast<int>(expected),
                                            " was expected"));
  }
  const std::string_view payload = value.substr(kValueHeaderBytes);
  if (payload.size() != length) {
    return absl::DataLossError(absl::StrCat(
        "value: payload is ", payload.size(), " bytes, header says ", length));
  }
  const uint64_t computed = Checksum64(payload);
  if (computed != checksum) {
    return absl::DataLossError(absl::StrFormat(
        "value: checksum mismatch (stored %016x, computed %016x)", checksum,
        computed));
  }
  return payload;
}

}  // namespace hummingd::cache_internal
