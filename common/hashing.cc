#include "common/hashing.h"

#include <openssl/evp.h>
#include <xxhash.h>

#include <array>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace hummingd {
namespace {

std::string ToHex(const unsigned char* digest, unsigned int length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kDigits[digest[i] >> 4]);
    hex.push_back(kDigits[digest[i] & 0xF]);
  }
  return hex;
}

}  // namespace

std::string Sha256Hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(),
             nullptr);
  return ToHex(digest.data(), length);
}

uint64_t Checksum64(std::string_view bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

KeyHasher::KeyHasher() : context_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_), EVP_sha256(), nullptr);
}

KeyHasher::~KeyHasher() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_)); }

void KeyHasher::Update(std::string_view bytes) {
  const std::string length = absl::StrCat(bytes.size(), ":");
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), length.data(),
                   length.size());
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), bytes.data(),
                   bytes.size());
}

KeyHasher& KeyHasher::Field(std::string_view name, std::string_view value) {
  Update(name);
  Update(value);
  return *this;
}

KeyHasher& KeyHasher::Field(std::string_view name, int64_t value) {
  return Field(name, std::string_view(absl::StrCat(value)));
}

std::string KeyHasher::HexDigest() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_), digest.data(),
                     &length);
  return ToHex(digest.data(), length);
}

}  // namespace hummingd
