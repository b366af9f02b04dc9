#pragma once

// Fixed-width little-endian encoding for cache values. Hand-written rather
// than protobuf so a value's layout is spelled out in one place and decoding
// is bounds-checked byte by byte (a truncated or bit-flipped value must fail
// to decode, never read past its end).

#include <cstdint>
#include <string>
#include <string_view>

namespace hummingd::cache_internal {

class ByteWriter {
 public:
  void U8(uint8_t value);
  void U16(uint16_t value);
  void U32(uint32_t value);
  void U64(uint64_t value);
  void I64(int64_t value) { U64(static_cast<uint64_t>(value)); }
  void F64(double value);
  // u32 length, then the bytes.
  void Bytes(std::string_view value);

  std::string& buffer() { return buffer_; }
  std::string Release() { return std::move(buffer_); }

 private:
  std::string buffer_;
};

// Every read returns false (and poisons the reader) when the input is too
// short; callers check ok() once at the end.
class ByteReader {
 public:
  explicit ByteReader(std::string_view input) : input_(input) {}

  bool U8(uint8_t* value);
  bool U16(uint16_t* value);
  bool U32(uint32_t* value);
  bool U64(uint64_t* value);
  bool I64(int64_t* value);
  bool I32(int* value);  // stored as i64, must fit in int
  bool F64(double* value);
  // A view into the input; valid as long as the input is.
  bool Bytes(std::string_view* value);
  bool String(std::string* value);

  bool ok() const { return ok_; }
  bool AtEnd() const { return ok_ && position_ == input_.size(); }

 private:
  bool Take(size_t count, const char** bytes);

  std::string_view input_;
  size_t position_ = 0;
  bool ok_ = true;
};

}  // namespace hummingd::cache_internal
