#pragma once

// The device headers (everything under kernels/device/) compiled into this
// library at build time, so that NVRTC needs no files at run time and the
// header content can be hashed into every artifact key.

#include <span>
#include <string>
#include <string_view>

namespace hummingd {

struct EmbeddedHeader {
  std::string_view path;     // relative to kernels/device, e.g. "gemm/x.cuh"
  std::string_view content;  // exact file bytes
};

// Sorted by path; the storage lives for the whole program.
std::span<const EmbeddedHeader> EmbeddedHeaders();

// SHA-256 over (path, content) of `headers` in path order and
// `stub_generator_version`. CodegenHash() is this over EmbeddedHeaders() and
// kStubGeneratorVersion; exposed so tests can hash a modified set.
std::string HashHeaderSet(std::span<const EmbeddedHeader> headers,
                          int stub_generator_version);

}  // namespace hummingd
