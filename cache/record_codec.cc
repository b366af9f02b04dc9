#include "cache/record_codec.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "cache/byte_io.h"
#include "cache/value_codec.h"
#include "common/hashing.h"
#include "common/status_macros.h"

namespace hummingd::cache_internal {
namespace {

absl::Status Undecodable(std::string_view what) {
  return absl::DataLossError(
      absl::StrFormat("value: %s payload does not decode", what));
}

// The artifact payload without its cubin bytes: shared by the full decoder
// and the summary decoder so the two can never disagree on the layout.
struct ArtifactFields {
  ArtifactRecord record;  // cubin left empty
  std::string_view cubin;
};

absl::StatusOr<ArtifactFields> ParseArtifactPayload(std::string_view payload) {
  ByteReader reader(payload);
  ArtifactFields fields;
  ArtifactRecord& r = fields.record;
  reader.I32(&r.threads_per_block);
  reader.I32(&r.dynamic_shared_memory);
  reader.I32(&r.registers);
  reader.I32(&r.spills);
  reader.F64(&r.compile_ms);
  reader.String(&r.toolchain);
  reader.String(&r.arch);
  reader.String(&r.entry);
  reader.String(&r.description);
  reader.U64(&r.cubin_checksum);
  reader.Bytes(&fields.cubin);
  if (!reader.AtEnd()) return Undecodable("artifact");
  return fields;
}

}  // namespace

std::string EncodeArtifactValue(const ArtifactRecord& record) {
  ValueBuilder builder(ValueType::kArtifact);
  ByteWriter& w = builder.writer();
  w.buffer().reserve(kValueHeaderBytes + record.cubin.size() +
                     record.description.size() + 256);
  w.I64(record.threads_per_block);
  w.I64(record.dynamic_shared_memory);
  w.I64(record.registers);
  w.I64(record.spills);
  w.F64(record.compile_ms);
  w.Bytes(record.toolchain);
  w.Bytes(record.arch);
  w.Bytes(record.entry);
  w.Bytes(record.description);
  w.U64(record.cubin_checksum);
  w.Bytes(record.cubin);  // last, so the summary decoder can stop before it
  return std::move(builder).Seal();
}

absl::StatusOr<ArtifactRecord> DecodeArtifactValue(std::string_view value) {
  ASSIGN_OR_RETURN(std::string_view payload,
                   OpenValue(ValueType::kArtifact, value));
  ASSIGN_OR_RETURN(ArtifactFields fields, ParseArtifactPayload(payload));
  const uint64_t computed = Checksum64(fields.cubin);
  if (computed != fields.record.cubin_checksum) {
    return absl::DataLossError(absl::StrFormat(
        "value: cubin checksum mismatch (stored %016x, computed %016x)",
        fields.record.cubin_checksum, computed));
  }
  fields.record.cubin.assign(fields.cubin);
  return std::move(fields.record);
}

absl::StatusOr<ArtifactSummary> DecodeArtifactSummary(std::string_view value) {
  ASSIGN_OR_RETURN(std::string_view payload,
                   OpenValue(ValueType::kArtifact, value));
  ASSIGN_OR_RETURN(ArtifactFields fields, ParseArtifactPayload(payload));
  ArtifactSummary summary;
  summary.entry = std::move(fields.record.entry);
  summary.arch = std::move(fields.record.arch);
  summary.description = std::move(fields.record.description);
  summary.compile_ms = fields.record.compile_ms;
  return summary;
}

namespace {

void EncodePlanEntry(ByteWriter& w, const PlanRecordEntry& entry) {
  w.Bytes(entry.role);
  w.I64(entry.m_min);
  w.I64(entry.m_max);
  w.Bytes(entry.artifact_key);
  w.U8(static_cast<uint8_t>(entry.config.family));
  w.Bytes(entry.config.skeleton);
  w.Bytes(entry.config.text);
  w.I64(entry.config.threads_per_block);
  w.I64(entry.config.dynamic_shared_memory);
  w.I64(entry.launch.block_x);
  w.I64(entry.launch.grid_x);
  w.I64(entry.launch.grid_y);
  w.I64(entry.launch.grid_z);
  w.I64(entry.launch.m_per_block_x);
  w.I64(entry.launch.dynamic_shared_memory);
  w.I64(entry.launch.workspace_bytes_per_m_block);
  w.I64(entry.launch.counter_bytes_per_m_block);
  w.U8(entry.launch.programmatic_dependent_launch ? 1 : 0);
}

void DecodePlanEntry(ByteReader& reader, PlanRecordEntry& entry) {
  uint8_t family = 0;
  reader.String(&entry.role);
  reader.I64(&entry.m_min);
  reader.I64(&entry.m_max);
  reader.String(&entry.artifact_key);
  reader.U8(&family);
  entry.config.family = static_cast<KernelFamily>(family);
  reader.String(&entry.config.skeleton);
  reader.String(&entry.config.text);
  reader.I32(&entry.config.threads_per_block);
  reader.I32(&entry.config.dynamic_shared_memory);
  reader.I32(&entry.launch.block_x);
  reader.I64(&entry.launch.grid_x);
  reader.I64(&entry.launch.grid_y);
  reader.I64(&entry.launch.grid_z);
  reader.I64(&entry.launch.m_per_block_x);
  reader.I32(&entry.launch.dynamic_shared_memory);
  reader.I64(&entry.launch.workspace_bytes_per_m_block);
  reader.I64(&entry.launch.counter_bytes_per_m_block);
  uint8_t programmatic = 0;
  reader.U8(&programmatic);
  entry.launch.programmatic_dependent_launch = programmatic != 0;
}

// Each entry takes well over 64 bytes; a count beyond that is garbage and
// must not drive a huge allocation.
bool DecodePlanEntries(ByteReader& reader, size_t payload_bytes,
                       std::vector<PlanRecordEntry>& entries) {
  uint32_t count = 0;
  reader.U32(&count);
  if (!reader.ok() || count > payload_bytes / 64) return false;
  entries.resize(count);
  for (PlanRecordEntry& entry : entries) DecodePlanEntry(reader, entry);
  return reader.ok();
}

}  // namespace

std::string EncodePlanValue(const PlanRecord& record) {
  ValueBuilder builder(ValueType::kPlan);
  ByteWriter& w = builder.writer();
  for (const auto* entries : {&record.entries, &record.prepare}) {
    w.U32(static_cast<uint32_t>(entries->size()));
    for (const PlanRecordEntry& entry : *entries) EncodePlanEntry(w, entry);
  }
  w.Bytes(record.description);
  return std::move(builder).Seal();
}

absl::StatusOr<PlanRecord> DecodePlanValue(std::string_view value) {
  ASSIGN_OR_RETURN(std::string_view payload,
                   OpenValue(ValueType::kPlan, value));
  ByteReader reader(payload);
  PlanRecord record;
  if (!DecodePlanEntries(reader, payload.size(), record.entries) ||
      !DecodePlanEntries(reader, payload.size(), record.prepare)) {
    return Undecodable("plan");
  }
  reader.String(&record.description);
  if (!reader.AtEnd()) return Undecodable("plan");
  return record;
}

std::string EncodeArtifactMetaValue(const ArtifactMeta& meta) {
  ValueBuilder builder(ValueType::kArtifactMeta);
  builder.writer().U64(meta.tick);
  builder.writer().U8(meta.pinned ? 1 : 0);
  return std::move(builder).Seal();
}

absl::StatusOr<ArtifactMeta> DecodeArtifactMetaValue(std::string_view value) {
  ASSIGN_OR_RETURN(std::string_view payload,
                   OpenValue(ValueType::kArtifactMeta, value));
  ByteReader reader(payload);
  ArtifactMeta meta;
  uint8_t pinned = 0;
  reader.U64(&meta.tick);
  reader.U8(&pinned);
  if (!reader.AtEnd() || pinned > 1) return Undecodable("artifact meta");
  meta.pinned = pinned == 1;
  return meta;
}

std::string EncodeSchemaMarkerValue(int schema_version) {
  ValueBuilder builder(ValueType::kSchemaMarker);
  builder.writer().I64(schema_version);
  return std::move(builder).Seal();
}

absl::StatusOr<int> DecodeSchemaMarkerValue(std::string_view value) {
  ASSIGN_OR_RETURN(std::string_view payload,
                   OpenValue(ValueType::kSchemaMarker, value));
  ByteReader reader(payload);
  int version = 0;
  reader.I32(&version);
  if (!reader.AtEnd()) return Undecodable("schema marker");
  return version;
}

}  // namespace hummingd::cache_internal
