#pragma once

// Two hashes with two jobs: SHA-256 names things (cache keys must not collide
// across a node's lifetime), XXH3-64 checks bytes on every read (it must be
// cheap enough for the cache-hit path).

#include <cstdint>
#include <string>
#include <string_view>

namespace hummingd {

// Lower-case hex SHA-256 of `bytes` (64 characters).
std::string Sha256Hex(std::string_view bytes);

// Fast non-cryptographic checksum for value integrity.
uint64_t Checksum64(std::string_view bytes);

// Incremental SHA-256 over length-prefixed fields, so that ("ab","c") and
// ("a","bc") hash differently.
class KeyHasher {
 public:
  KeyHasher();
  ~KeyHasher();
  KeyHasher(const KeyHasher&) = delete;
  KeyHasher& operator=(const KeyHasher&) = delete;

  KeyHasher& Field(std::string_view name, std::string_view value);
  KeyHasher& Field(std::string_view name, int64_t value);
  std::string HexDigest();

 private:
  void Update(std::string_view bytes);
  void* context_;  // EVP_MD_CTX*, kept opaque so OpenSSL stays out of headers.
};

}  // namespace hummingd
