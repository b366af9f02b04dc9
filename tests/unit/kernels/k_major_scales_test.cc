// The k-major scale layout (kernels/k_major_scales.h): which specs the
// layout=kmajor tiles can read, and the host transpose against hand-built
// [column][row] tensors of 1-, 2- and 4-byte elements.

#include "kernels/k_major_scales.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/quant_spec.h"

namespace hummingd {
namespace {

KMajorScaleSource SourceOf(const char* spec_text) {
  absl::StatusOr<QuantSpec> spec = ParseSpecText(spec_text);
  EXPECT_TRUE(spec.ok()) << spec_text << ": " << spec.status();
  return KMajorScaleSourceOf(Canonicalize(*spec));
}

TEST(KMajorScalesTest, OneScalePerRowWithoutZeroPoints) {
  EXPECT_EQ(SourceOf("weight=uint4,group=128,scale=fp16"),
            KMajorScaleSource::kCopy);
  EXPECT_EQ(SourceOf("weight=e2m1,group=16,scale=e4m3,scale2=tensor"),
            KMajorScaleSource::kCopy);
  EXPECT_EQ(SourceOf("weight=uint8,group=channel,scale=fp16"),
            KMajorScaleSource::kCheckpoint);
  EXPECT_EQ(SourceOf("weight=uint4,group=128,scale=fp16,zero=int"),
            KMajorScaleSource::kNone);
  EXPECT_EQ(SourceOf("weight=uint4,group=channel,scale=fp16,zero=float"),
            KMajorScaleSource::kNone);
  EXPECT_EQ(SourceOf("weight=e4m3,group=128x128,scale=fp32"),
            KMajorScaleSource::kNone);
  EXPECT_EQ(SourceOf("weight=uint4,group=tensor,scale=fp16"),
            KMajorScaleSource::kNone);
}

// Element (r, c) of a rows x columns tensor lands at (c * rows + r), every
// byte of it in order.
TEST(KMajorScalesTest, TransposesEveryElementWhole) {
  for (int element_bytes : {1, 2, 4}) {
    SCOPED_TRACE(element_bytes);
    const int64_t rows = 5;
    const int64_t columns = 3;
    std::vector<unsigned char> row_major(rows * columns * element_bytes);
    for (size_t i = 0; i < row_major.size(); ++i) {
      row_major[i] = static_cast<unsigned char>(7 * i + 1);
    }
    const std::vector<unsigned char> k_major =
        TransposeScalesToKMajor(row_major.data(), rows, columns, element_bytes);
    ASSERT_EQ(k_major.size(), row_major.size());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < columns; ++c) {
        for (int b = 0; b < element_bytes; ++b) {
          EXPECT_EQ(k_major[(c * rows + r) * element_bytes + b],
                    row_major[(r * columns + c) * element_bytes + b])
              << "r=" << r << " c=" << c << " byte " << b;
        }
      }
    }
  }
  // One column (channel-wise) is its own transpose; so is one row.
  const std::vector<unsigned char> column = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(TransposeScalesToKMajor(column.data(), 3, 1, 2), column);
  EXPECT_EQ(TransposeScalesToKMajor(column.data(), 1, 3, 2), column);
  // 2 x 2 fp16: [[a b] [c d]] -> [[a c] [b d]].
  const std::vector<unsigned char> square = {0xA0, 0xA1, 0xB0, 0xB1,
                                             0xC0, 0xC1, 0xD0, 0xD1};
  EXPECT_EQ(TransposeScalesToKMajor(square.data(), 2, 2, 2),
            (std::vector<unsigned char>{0xA0, 0xA1, 0xC0, 0xC1, 0xB0, 0xB1,
                                        0xD0, 0xD1}));
}

}  // namespace
}  // namespace hummingd
