// The embedded header set and the codegen hash over it.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/codegen.h"
#include "kernels/embedded_headers.h"
#include "kernels/nvrtc_compiler.h"

namespace hummingd {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(EmbeddedHeadersTest, EveryDeviceHeaderIsEmbeddedVerbatim) {
  const std::filesystem::path root = HUMMINGD_DEVICE_SOURCE_DIR;
  std::set<std::string> on_disk;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().extension() == ".cuh") {
      on_disk.insert(entry.path().lexically_relative(root).generic_string());
    }
  }
  std::set<std::string> embedded;
  std::vector<std::string> order;
  for (const EmbeddedHeader& header : EmbeddedHeaders()) {
    embedded.emplace(header.path);
    order.emplace_back(header.path);
    EXPECT_EQ(header.content, ReadFile(root / std::string(header.path)))
        << header.path << " differs from the file on disk";
  }
  EXPECT_EQ(embedded, on_disk);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  EXPECT_TRUE(embedded.count("gemm/dequant_kernel.cuh"));
  EXPECT_TRUE(embedded.count("arch/platform.cuh"));
}

TEST(CodegenHashTest, StableAndOverTheEmbeddedSet) {
  const std::string& hash = CodegenHash();
  EXPECT_EQ(hash.size(), 64u);
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(CodegenHash(), hash);
  EXPECT_EQ(HashHeaderSet(EmbeddedHeaders(), kStubGeneratorVersion), hash);
}

TEST(CodegenHashTest, AnyChangeToTheHeaderSetChangesIt) {
  const std::vector<EmbeddedHeader> original(EmbeddedHeaders().begin(),
                                             EmbeddedHeaders().end());
  ASSERT_GE(original.size(), 2u);
  const std::string base = HashHeaderSet(original, kStubGeneratorVersion);

  // Order of the input list does not matter (the set is sorted first).
  std::vector<EmbeddedHeader> reversed(original.rbegin(), original.rend());
  EXPECT_EQ(HashHeaderSet(reversed, kStubGeneratorVersion), base);

  // One byte of one header.
  const std::string edited =
      std::string(original[1].content) + "\n// one more line\n";
  std::vector<EmbeddedHeader> modified = original;
  modified[1].content = edited;
  EXPECT_NE(HashHeaderSet(modified, kStubGeneratorVersion), base);

  // A rename with identical content.
  std::vector<EmbeddedHeader> renamed = original;
  const std::string new_name = std::string(original[0].path) + ".moved";
  renamed[0].path = new_name;
  EXPECT_NE(HashHeaderSet(renamed, kStubGeneratorVersion), base);

  // A header removed, or content moved across a path boundary.
  std::vector<EmbeddedHeader> fewer(original.begin() + 1, original.end());
  EXPECT_NE(HashHeaderSet(fewer, kStubGeneratorVersion), base);

  // The stub generator version.
  EXPECT_NE(HashHeaderSet(original, kStubGeneratorVersion + 1), base);
}

}  // namespace
}  // namespace hummingd
