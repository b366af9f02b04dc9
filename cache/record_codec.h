#pragma once

// Payload layouts of the cache's records, inside the value_codec envelope.
// Field order is the on-disk format: change it only together with
// kValueFormatVersion (or kCacheSchemaVersion, which clears old directories).

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "cache/records.h"

namespace hummingd::cache_internal {

// What ListArtifacts shows, readable without copying the cubin.
struct ArtifactSummary {
  std::string entry;
  std::string arch;
  std::string description;
  double compile_ms = 0;
};

// Per-artifact bookkeeping in the "meta" column family.
struct ArtifactMeta {
  uint64_t tick = 0;  // last access; larger = more recent
  bool pinned = false;

  bool operator==(const ArtifactMeta&) const = default;
};

// `record.cubin_checksum` is written as given; the store fills it first.
std::string EncodeArtifactValue(const ArtifactRecord& record);
// Verifies the envelope and the record's cubin checksum.
absl::StatusOr<ArtifactRecord> DecodeArtifactValue(std::string_view value);
// Verifies the envelope; does not copy or re-hash the cubin.
absl::StatusOr<ArtifactSummary> DecodeArtifactSummary(std::string_view value);

std::string EncodePlanValue(const PlanRecord& record);
absl::StatusOr<PlanRecord> DecodePlanValue(std::string_view value);

std::string EncodeArtifactMetaValue(const ArtifactMeta& meta);
absl::StatusOr<ArtifactMeta> DecodeArtifactMetaValue(std::string_view value);

std::string EncodeSchemaMarkerValue(int schema_version);
absl::StatusOr<int> DecodeSchemaMarkerValue(std::string_view value);

}  // namespace hummingd::cache_internal
