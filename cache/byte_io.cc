#include "cache/byte_io.h"

#include <bit>
#include <limits>

namespace hummingd::cache_internal {
namespace {

template <typename T>
void AppendLittleEndian(std::string& out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  }
}

template <typename T>
T LoadLittleEndian(const char* bytes) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    value |= static_cast<T>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  }
  return value;
}

}  // namespace

void ByteWriter::U8(uint8_t value) {
  buffer_.push_back(static_cast<char>(value));
}
void ByteWriter::U16(uint16_t value) { AppendLittleEndian(buffer_, value); }
void ByteWriter::U32(uint32_t value) { AppendLittleEndian(buffer_, value); }
void ByteWriter::U64(uint64_t value) { AppendLittleEndian(buffer_, value); }
void ByteWriter::F64(double value) { U64(std::bit_cast<uint64_t>(value)); }

void ByteWriter::Bytes(std::string_view value) {
  U32(static_cast<uint32_t>(value.size()));
  buffer_.append(value);
}

bool ByteReader::Take(size_t count, const char** bytes) {
  if (!ok_ || input_.size() - position_ < count) {
    ok_ = false;
    return false;
  }
  *bytes = input_.data() + position_;
  position_ += count;
  return true;
}

bool ByteReader::U8(uint8_t* value) {
  const char* bytes = nullptr;
  if (!Take(1, &bytes)) return false;
  *value = static_cast<uint8_t>(bytes[0]);
  return true;
}

bool ByteReader::U16(uint16_t* value) {
  const char* bytes = nullptr;
  if (!Take(2, &bytes)) return false;
  *value = LoadLittleEndian<uint16_t>(bytes);
  return true;
}

bool ByteReader::U32(uint32_t* value) {
  const char* bytes = nullptr;
  if (!Take(4, &bytes)) return false;
  *value = LoadLittleEndian<uint32_t>(bytes);
  return true;
}

bool ByteReader::U64(uint64_t* value) {
  const char* bytes = nullptr;
  if (!Take(8, &bytes)) return false;
  *value = LoadLittleEndian<uint64_t>(bytes);
  return true;
}

bool ByteReader::I64(int64_t* value) {
  uint64_t raw = 0;
  if (!U64(&raw)) return false;
  *value = static_cast<int64_t>(raw);
  return true;
}

bool ByteReader::I32(int* value) {
  int64_t wide = 0;
  if (!I64(&wide)) return false;
  if (wide < std::numeric_limits<int>::min() ||
      wide > std::numeric_limits<int>::max()) {
    ok_ = false;
    return false;
  }
  *value = static_cast<int>(wide);
  return true;
}

bool ByteReader::F64(double* value) {
  uint64_t raw = 0;
  if (!U64(&raw)) return false;
  *value = std::bit_cast<double>(raw);
  return true;
}

bool ByteReader::Bytes(std::string_view* value) {
  uint32_t length = 0;
  const char* bytes = nullptr;
  if (!U32(&length) || !Take(length, &bytes)) return false;
  *value = std::string_view(bytes, length);
  return true;
}

bool ByteReader::String(std::string* value) {
  std::string_view view;
  if (!Bytes(&view)) return false;
  value->assign(view);
  return true;
}

}  // namespace hummingd::cache_internal
