#include "cache/value_codec.h"

#include <random>
#include <string>

#include "absl/status/status.h"
#include "cache/record_codec.h"
#include "cache_test_util.h"
#include "common/hashing.h"
#include "gtest/gtest.h"

namespace hummingd::cache_internal {
namespace {

using cache_test::FreshSeed;
using cache_test::RandomArtifact;
using cache_test::RandomBytes;
using cache_test::RandomPlan;

std::string SealBytes(ValueType type, const std::string& payload) {
  ValueBuilder builder(type);
  builder.writer().buffer().append(payload);
  return std::move(builder).Seal();
}

TEST(ValueCodecTest, EnvelopeRoundTrip) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  const std::string payload = RandomBytes(rng, 777);
  const std::string value = SealBytes(ValueType::kPlan, payload);
  ASSERT_EQ(value.size(), kValueHeaderBytes + payload.size());
  EXPECT_EQ(value.substr(0, 4), "HMKV");
  absl::StatusOr<std::string_view> opened = OpenValue(ValueType::kPlan, value);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(*opened, payload);
}

TEST(ValueCodecTest, EmptyPayloadRoundTrips) {
  const std::string value = SealBytes(ValueType::kArtifactMeta, "");
  absl::StatusOr<std::string_view> opened =
      OpenValue(ValueType::kArtifactMeta, value);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_TRUE(opened->empty());
}

TEST(ValueCodecTest, WrongTypeIsRejected) {
  const std::string value = SealBytes(ValueType::kPlan, "plan bytes");
  absl::StatusOr<std::string_view> opened =
      OpenValue(ValueType::kArtifact, value);
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kDataLoss);
}

TEST(ValueCodecTest, ArtifactRoundTrip) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  ArtifactRecord record = RandomArtifact(rng, 4096);
  record.cubin_checksum = Checksum64(record.cubin);
  const std::string value = EncodeArtifactValue(record);
  absl::StatusOr<ArtifactRecord> decoded = DecodeArtifactValue(value);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, record);

  absl::StatusOr<ArtifactSummary> summary = DecodeArtifactSummary(value);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->entry, record.entry);
  EXPECT_EQ(summary->arch, record.arch);
  EXPECT_EQ(summary->description, record.description);
  EXPECT_EQ(summary->compile_ms, record.compile_ms);
}

TEST(ValueCodecTest, ArtifactWithWrongCubinChecksumIsRejected) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  ArtifactRecord record = RandomArtifact(rng, 512);
  record.cubin_checksum = Checksum64(record.cubin) ^ 1;
  absl::StatusOr<ArtifactRecord> decoded =
      DecodeArtifactValue(EncodeArtifactValue(record));
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(decoded.status().message().find("cubin checksum"),
            std::string_view::npos)
      << decoded.status();
}

TEST(ValueCodecTest, PlanRoundTrip) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  const PlanRecord plan = RandomPlan(rng, 5);
  absl::StatusOr<PlanRecord> decoded = DecodePlanValue(EncodePlanValue(plan));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, plan);
}

TEST(ValueCodecTest, MetaAndSchemaMarkerRoundTrip) {
  const ArtifactMeta meta{.tick = 0x1234'5678'9abc'def0ULL, .pinned = true};
  absl::StatusOr<ArtifactMeta> decoded =
      DecodeArtifactMetaValue(EncodeArtifactMetaValue(meta));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, meta);

  absl::StatusOr<int> version =
      DecodeSchemaMarkerValue(EncodeSchemaMarkerValue(42));
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(*version, 42);
}

// Every single-byte change anywhere in a stored value must be caught.
TEST(ValueCodecTest, EverySingleByteFlipIsRejected) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  ArtifactRecord record = RandomArtifact(rng, 1500);
  record.cubin_checksum = Checksum64(record.cubin);
  const std::string artifact_value = EncodeArtifactValue(record);
  const std::string plan_value = EncodePlanValue(RandomPlan(rng, 3));

  for (size_t offset = 0; offset < artifact_value.size(); ++offset) {
    std::string flipped = artifact_value;
    flipped[offset] = static_cast<char>(flipped[offset] ^ (1 + rng() % 255));
    absl::StatusOr<ArtifactRecord> decoded = DecodeArtifactValue(flipped);
    ASSERT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss)
        << "artifact byte " << offset << " flipped was accepted";
    ASSERT_FALSE(DecodeArtifactSummary(flipped).ok())
        << "artifact summary accepted a flip at byte " << offset;
  }
  for (size_t offset = 0; offset < plan_value.size(); ++offset) {
    std::string flipped = plan_value;
    flipped[offset] = static_cast<char>(flipped[offset] ^ (1 + rng() % 255));
    ASSERT_EQ(DecodePlanValue(flipped).status().code(),
              absl::StatusCode::kDataLoss)
        << "plan byte " << offset << " flipped was accepted";
  }
}

TEST(ValueCodecTest, EveryTruncationAndExtensionIsRejected) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  ArtifactRecord record = RandomArtifact(rng, 900);
  record.cubin_checksum = Checksum64(record.cubin);
  const std::string value = EncodeArtifactValue(record);
  for (size_t length = 0; length < value.size(); ++length) {
    ASSERT_FALSE(DecodeArtifactValue(value.substr(0, length)).ok())
        << "truncation to " << length << " bytes was accepted";
  }
  std::string extended = value + static_cast<char>(rng() & 0xFF);
  EXPECT_FALSE(DecodeArtifactValue(extended).ok());
  const std::string meta_value =
      EncodeArtifactMetaValue(ArtifactMeta{.tick = 7, .pinned = false});
  for (size_t length = 0; length < meta_value.size(); ++length) {
    ASSERT_FALSE(DecodeArtifactMetaValue(meta_value.substr(0, length)).ok())
        << "meta truncation to " << length << " bytes was accepted";
  }
}

// A payload whose checksum matches but whose layout is wrong (as a bug in a
// writer would produce) still fails to decode instead of reading garbage.
TEST(ValueCodecTest, WellSealedGarbagePayloadIsRejected) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    const std::string garbage = RandomBytes(rng, rng() % 300);
    EXPECT_FALSE(
        DecodeArtifactValue(SealBytes(ValueType::kArtifact, garbage)).ok());
    EXPECT_FALSE(DecodePlanValue(SealBytes(ValueType::kPlan, garbage)).ok());
  }
}

}  // namespace
}  // namespace hummingd::cache_internal
