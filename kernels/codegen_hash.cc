// The codegen hash: what of the code generator an artifact key must see.

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "common/hashing.h"
#include "kernels/codegen.h"
#include "kernels/embedded_headers.h"
#include "kernels/nvrtc_compiler.h"

namespace hummingd {

std::string HashHeaderSet(std::span<const EmbeddedHeader> headers,
                          int stub_generator_version) {
  // Sort a copy: the hash must not depend on the order callers list headers.
  std::vector<EmbeddedHeader> sorted(headers.begin(), headers.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const EmbeddedHeader& a, const EmbeddedHeader& b) {
              return a.path < b.path;
            });
  KeyHasher hasher;
  hasher.Field("stub_generator_version", int64_t{stub_generator_version});
  hasher.Field("header_count", static_cast<int64_t>(sorted.size()));
  for (const EmbeddedHeader& header : sorted) {
    hasher.Field("path", header.path);
    hasher.Field("content", header.content);
  }
  return hasher.HexDigest();
}

const std::string& CodegenHash() {
  // Headers are fixed at build time, so the hash is computed once.
  static const std::string* const hash =
      new std::string(HashHeaderSet(EmbeddedHeaders(), kStubGeneratorVersion));
  return *hash;
}

}  // namespace hummingd
