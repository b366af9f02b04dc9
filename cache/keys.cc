#include "cache/keys.h"

#include <cstdint>

#include "common/hashing.h"

namespace hummingd {
namespace {

// Enums enter keys as their declared integer values (stable on-disk numbers),
// never as names that a rename could change.
template <typename Enum>
int64_t EnumValue(Enum value) {
  return static_cast<int64_t>(value);
}

void AddShape(KeyHasher& hasher, const LayerShape& shape) {
  hasher.Field("shape.n", shape.n)
      .Field("shape.k", shape.k)
      .Field("shape.kind", EnumValue(shape.kind))
      .Field("shape.experts", shape.experts)
      .Field("shape.top_k", shape.top_k);
}

}  // namespace

std::string PlanKey(const PlanKeyInputs& inputs) {
  KeyHasher hasher;
  hasher.Field("record", "plan")
      .Field("cache_schema_version", int64_t{kCacheSchemaVersion})
      .Field("planner_version", int64_t{inputs.planner_version})
      .Field("family", EnumValue(inputs.family))
      .Field("canonical_spec", inputs.canonical_spec);
  AddShape(hasher, inputs.shape);
  hasher.Field("planner_gpu_fields", inputs.planner_gpu_fields)
      .Field("launch_abi", int64_t{inputs.launch_abi});
  return hasher.HexDigest();
}

std::string ArtifactKey(const ArtifactKeyInputs& inputs) {
  KeyHasher hasher;
  hasher.Field("record", "artifact")
      .Field("cache_schema_version", int64_t{kCacheSchemaVersion})
      .Field("codegen_hash", inputs.codegen_hash)
      .Field("toolchain", inputs.toolchain)
      .Field("arch", inputs.arch)
      .Field("compile_options.count",
             static_cast<int64_t>(inputs.compile_options.size()));
  for (const std::string& option : inputs.compile_options) {
    hasher.Field("compile_option", option);
  }
  hasher.Field("canonical_spec", inputs.canonical_spec);
  AddShape(hasher, inputs.shape);
  hasher.Field("skeleton", inputs.skeleton)
      .Field("config_text", inputs.config_text);
  return hasher.HexDigest();
}

}  // namespace hummingd
