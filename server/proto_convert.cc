#include "server/proto_convert.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kernels/launch_abi.h"

namespace hummingd {
namespace {

absl::Status Invalid(absl::string_view field, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", rule));
}

// Bounds on the client's strings, far above any real value, checked before
// anything parses or echoes them: error messages quote them, and a message
// past gRPC's metadata limit arrives as RESOURCE_EXHAUSTED instead.
constexpr size_t kMaxArchBytes = 64;         // "sm_90a"
constexpr size_t kMaxSpecTextBytes = 1024;   // real specs take 60-120
constexpr size_t kMaxDeviceNameBytes = 256;  // "NVIDIA H100 80GB HBM3"
constexpr size_t kMaxNameBytes = 512;        // a layer name

absl::Status CheckLength(absl::string_view field, absl::string_view value,
                         size_t max_bytes) {
  if (value.size() <= max_bytes) return absl::OkStatus();
  return Invalid(field, absl::StrCat("at most ", max_bytes, " bytes (got ",
                                     value.size(), ")"));
}

// Plausible hardware figures; 0 means unknown (the planner assumes the
// arch's). The archs planned for have 64-228 KiB of opt-in shared memory per
// block and under 200 SMs; a figure outside these ranges is a broken client,
// and the planner's arithmetic on it goes wrong (1 byte of shared memory
// was reported as a negative byte count).
constexpr int kMinSharedMemoryOptin = 16 << 10;
constexpr int kMaxSharedMemoryOptin = 1 << 20;
constexpr int kMaxSmCount = 4096;

absl::StatusOr<DataType> DataTypeFromProto(v1::DataType value,
                                           absl::string_view field) {
  switch (value) {
    case v1::DATA_TYPE_FP16:
      return DataType::kFp16;
    case v1::DATA_TYPE_BF16:
      return DataType::kBf16;
    case v1::DATA_TYPE_FP32:
      return DataType::kFp32;
    case v1::DATA_TYPE_E4M3:
      return DataType::kE4m3;
    case v1::DATA_TYPE_E5M2:
      return DataType::kE5m2;
    case v1::DATA_TYPE_UE8M0:
      return DataType::kUe8m0;
    case v1::DATA_TYPE_INT8:
      return DataType::kInt8;
    case v1::DATA_TYPE_INT4:
      return DataType::kInt4;
    default:
      return Invalid(field,
                     absl::StrCat("must be set to a known data type (got ",
                                  static_cast<int>(value), ")"));
  }
}

v1::DataType DataTypeToProto(DataType value) {
  return static_cast<v1::DataType>(static_cast<int>(value));
}

absl::StatusOr<QuantSpec> StructuredSpecFromProto(const v1::QuantSpec& proto) {
  QuantSpec spec;
  const v1::WeightType& weight = proto.weight();
  switch (weight.kind()) {
    case v1::WEIGHT_KIND_UINT:
      spec.weight.kind = WeightKind::kUint;
      break;
    case v1::WEIGHT_KIND_INT:
      spec.weight.kind = WeightKind::kInt;
      break;
    case v1::WEIGHT_KIND_FLOAT:
      spec.weight.kind = WeightKind::kFloat;
      break;
    default:
      return Invalid("request.spec.weight.kind", "must be UINT, INT or FLOAT");
  }
  spec.weight.bits = weight.bits();
  spec.weight.exponent_bits = weight.exponent_bits();
  spec.weight.mantissa_bits = weight.mantissa_bits();

  switch (proto.granularity()) {
    case v1::SCALE_GRANULARITY_GROUP:
      spec.granularity = ScaleGranularity::kGroup;
      break;
    case v1::SCALE_GRANULARITY_CHANNEL:
      spec.granularity = ScaleGranularity::kChannel;
      break;
    case v1::SCALE_GRANULARITY_BLOCK:
      spec.granularity = ScaleGranularity::kBlock;
      break;
    case v1::SCALE_GRANULARITY_TENSOR:
      spec.granularity = ScaleGranularity::kTensor;
      break;
    default:
      return Invalid("request.spec.granularity",
                     "must be GROUP, CHANNEL, BLOCK or TENSOR");
  }
  spec.group_size = proto.group_size();
  spec.block_n = proto.block_n();
  spec.block_k = proto.block_k();
  ASSIGN_OR_RETURN(
      spec.scale_type,
      DataTypeFromProto(proto.scale_type(), "request.spec.scale_type"));
  switch (proto.zero_point()) {
    case v1::ZERO_POINT_KIND_UNSPECIFIED:
    case v1::ZERO_POINT_KIND_NONE:
      spec.zero_point = ZeroPointKind::kNone;
      break;
    case v1::ZERO_POINT_KIND_INTEGER:
      spec.zero_point = ZeroPointKind::kInteger;
      break;
    case v1::ZERO_POINT_KIND_FLOAT:
      spec.zero_point = ZeroPointKind::kFloat;
      break;
    default:
      return Invalid("request.spec.zero_point", "unknown zero-point kind");
  }
  switch (proto.secondary_scale()) {
    case v1::SECONDARY_SCALE_UNSPECIFIED:
    case v1::SECONDARY_SCALE_NONE:
      spec.secondary_scale = SecondaryScale::kNone;
      break;
    case v1::SECONDARY_SCALE_TENSOR:
      spec.secondary_scale = SecondaryScale::kTensor;
      break;
    case v1::SECONDARY_SCALE_CHANNEL:
      spec.secondary_scale = SecondaryScale::kChannel;
      break;
    default:
      return Invalid("request.spec.secondary_scale", "unknown secondary scale");
  }
  ASSIGN_OR_RETURN(spec.activation_type,
                   DataTypeFromProto(proto.activation_type(),
                                     "request.spec.activation_type"));
  switch (proto.activation_scale()) {
    case v1::ACTIVATION_SCALE_MODE_UNSPECIFIED:
    case v1::ACTIVATION_SCALE_MODE_NONE:
      spec.activation_scale = ActivationScaleMode::kNone;
      break;
    case v1::ACTIVATION_SCALE_MODE_PER_TOKEN:
      spec.activation_scale = ActivationScaleMode::kPerToken;
      break;
    case v1::ACTIVATION_SCALE_MODE_PER_GROUP:
      spec.activation_scale = ActivationScaleMode::kPerGroup;
      break;
    case v1::ACTIVATION_SCALE_MODE_TENSOR:
      spec.activation_scale = ActivationScaleMode::kTensor;
      break;
    default:
      return Invalid("request.spec.activation_scale",
                     "unknown activation scale mode");
  }
  ASSIGN_OR_RETURN(
      spec.output_type,
      DataTypeFromProto(proto.output_type(), "request.spec.output_type"));
  spec.has_bias = proto.has_bias();
  return spec;
}

bool HasStructuredFields(const v1::QuantSpec& proto) {
  v1::QuantSpec copy = proto;
  copy.clear_text();
  return copy.ByteSizeLong() != 0;
}

absl::StatusOr<QuantSpec> SpecFromProto(const v1::QuantSpec& proto) {
  if (!proto.text().empty()) {
    if (HasStructuredFields(proto)) {
      return Invalid("request.spec",
                     "set either the text form or the structured fields, not "
                     "both");
    }
    absl::StatusOr<QuantSpec> parsed = ParseSpecText(proto.text());
    if (!parsed.ok()) {
      return Invalid("request.spec.text", parsed.status().message());
    }
    return parsed;
  }
  return StructuredSpecFromProto(proto);
}

// Prefixes kernels/ validation errors ("spec.group_size: …") with the
// request path so that the message names the field as the client sent it.
absl::Status WithRequestPrefix(absl::Status status) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat("request.", status.message()));
}

}  // namespace

absl::StatusOr<KernelFamily> ParseKernelFamily(absl::string_view text) {
  if (text == "dequant") return KernelFamily::kDequant;
  if (text == "gemm") return KernelFamily::kGemm;
  return Invalid("family",
                 absl::StrCat("must be dequant or gemm (got '", text, "')"));
}

std::string KernelFamilyName(KernelFamily family) {
  return family == KernelFamily::kDequant ? "dequant" : "gemm";
}

absl::StatusOr<GemmKind> ParseGemmKind(absl::string_view text) {
  if (text == "dense") return GemmKind::kDense;
  if (text == "moe_indexed") return GemmKind::kMoeIndexed;
  if (text == "moe_grouped") return GemmKind::kMoeGrouped;
  return Invalid(
      "kind", absl::StrCat("must be dense, moe_indexed or moe_grouped (got '",
                           text, "')"));
}

absl::StatusOr<KernelRequest> KernelRequestFromProto(
    const v1::KernelRequest& proto, const RequestLimits& limits) {
  RETURN_IF_ERROR(CheckLength("request.name", proto.name(), kMaxNameBytes));
  RETURN_IF_ERROR(
      CheckLength("request.spec.text", proto.spec().text(), kMaxSpecTextBytes));
  RETURN_IF_ERROR(
      CheckLength("request.gpu.arch", proto.gpu().arch(), kMaxArchBytes));
  RETURN_IF_ERROR(CheckLength("request.gpu.device_name",
                              proto.gpu().device_name(), kMaxDeviceNameBytes));
  KernelRequest request;
  switch (proto.family()) {
    case v1::KERNEL_FAMILY_DEQUANT:
      request.family = KernelFamily::kDequant;
      break;
    case v1::KERNEL_FAMILY_GEMM:
      request.family = KernelFamily::kGemm;
      break;
    default:
      return Invalid("request.family", "must be DEQUANT or GEMM");
  }
  // A newer client's layout may carry fields this daemon's kernels do not
  // know; planning for it as if it were ours could hand it a kernel that
  // reads its arguments wrongly.
  if (proto.launch_abi() > kCurrentLaunchAbi) {
    return Invalid(
        "request.launch_abi",
        absl::StrCat(proto.launch_abi(), " is newer than this daemon (",
                     kCurrentLaunchAbi, ")"));
  }
  request.launch_abi = proto.launch_abi();
  // Any value is valid: one at or above the plan's last range keeps every
  // range, as 0 does.
  request.max_m = proto.max_m();
  if (!proto.has_spec()) return Invalid("request.spec", "is required");
  ASSIGN_OR_RETURN(QuantSpec spec, SpecFromProto(proto.spec()));
  request.spec = Canonicalize(spec);
  RETURN_IF_ERROR(WithRequestPrefix(ValidateSpec(request.spec)));

  if (!proto.has_shape()) return Invalid("request.shape", "is required");
  const v1::GemmShape& shape = proto.shape();
  request.shape.n = shape.n();
  request.shape.k = shape.k();
  request.shape.experts = shape.experts();
  request.shape.top_k = shape.top_k();
  switch (shape.kind()) {
    case v1::GEMM_KIND_UNSPECIFIED:
    case v1::GEMM_KIND_DENSE:
      request.shape.kind = GemmKind::kDense;
      break;
    case v1::GEMM_KIND_MOE_INDEXED:
      request.shape.kind = GemmKind::kMoeIndexed;
      break;
    case v1::GEMM_KIND_MOE_GROUPED:
      request.shape.kind = GemmKind::kMoeGrouped;
      break;
    default:
      return Invalid("request.shape.kind", "unknown GEMM kind");
  }
  RETURN_IF_ERROR(WithRequestPrefix(ValidateShape(
      request.spec, request.shape, request.family, limits.shape)));

  if (!proto.has_gpu() || proto.gpu().arch().empty()) {
    return Invalid("request.gpu.arch", "is required (e.g. sm_90a)");
  }
  absl::StatusOr<GpuTarget> gpu = ParseGpuArch(proto.gpu().arch());
  if (!gpu.ok()) return WithRequestPrefix(gpu.status());
  request.gpu = *gpu;
  const int sm_count = proto.gpu().sm_count();
  if (sm_count < 0 || sm_count > kMaxSmCount) {
    return Invalid("request.gpu.sm_count",
                   absl::StrCat("must be 0 (unknown) or 1..", kMaxSmCount,
                                " (got ", sm_count, ")"));
  }
  const int optin = proto.gpu().max_shared_memory_per_block_optin();
  if (optin != 0 &&
      (optin < kMinSharedMemoryOptin || optin > kMaxSharedMemoryOptin)) {
    return Invalid(
        "request.gpu.max_shared_memory_per_block_optin",
        absl::StrCat("must be 0 (unknown) or ", kMinSharedMemoryOptin, "..",
                     kMaxSharedMemoryOptin, " bytes (got ", optin, ")"));
  }
  request.gpu.sm_count = proto.gpu().sm_count();
  request.gpu.max_shared_memory_per_block_optin =
      proto.gpu().max_shared_memory_per_block_optin();
  request.gpu.device_name = proto.gpu().device_name();
  return request;
}

v1::KernelRequest KernelRequestToProto(const KernelRequest& request) {
  v1::KernelRequest proto;
  proto.set_family(request.family == KernelFamily::kDequant
                       ? v1::KERNEL_FAMILY_DEQUANT
                       : v1::KERNEL_FAMILY_GEMM);
  v1::QuantSpec* spec = proto.mutable_spec();
  const QuantSpec& s = request.spec;
  spec->mutable_weight()->set_kind(
      static_cast<v1::WeightKind>(static_cast<int>(s.weight.kind)));
  spec->mutable_weight()->set_bits(s.weight.bits);
  spec->mutable_weight()->set_exponent_bits(s.weight.exponent_bits);
  spec->mutable_weight()->set_mantissa_bits(s.weight.mantissa_bits);
  spec->set_granularity(
      static_cast<v1::ScaleGranularity>(static_cast<int>(s.granularity)));
  spec->set_group_size(s.group_size);
  spec->set_block_n(s.block_n);
  spec->set_block_k(s.block_k);
  spec->set_scale_type(DataTypeToProto(s.scale_type));
  spec->set_zero_point(
      static_cast<v1::ZeroPointKind>(static_cast<int>(s.zero_point)));
  spec->set_secondary_scale(
      static_cast<v1::SecondaryScale>(static_cast<int>(s.secondary_scale)));
  spec->set_activation_type(DataTypeToProto(s.activation_type));
  spec->set_activation_scale(static_cast<v1::ActivationScaleMode>(
      static_cast<int>(s.activation_scale)));
  spec->set_output_type(DataTypeToProto(s.output_type));
  spec->set_has_bias(s.has_bias);

  v1::GemmShape* shape = proto.mutable_shape();
  shape->set_n(request.shape.n);
  shape->set_k(request.shape.k);
  shape->set_kind(
      static_cast<v1::GemmKind>(static_cast<int>(request.shape.kind)));
  shape->set_experts(request.shape.experts);
  shape->set_top_k(request.shape.top_k);

  v1::GpuTarget* gpu = proto.mutable_gpu();
  gpu->set_arch(request.gpu.ArchName());
  gpu->set_sm_count(request.gpu.sm_count);
  gpu->set_max_shared_memory_per_block_optin(
      request.gpu.max_shared_memory_per_block_optin);
  gpu->set_device_name(request.gpu.device_name);
  proto.set_launch_abi(request.launch_abi);
  proto.set_max_m(request.max_m);
  return proto;
}

v1::LaunchParams LaunchParamsToProto(const LaunchParams& launch) {
  v1::LaunchParams proto;
  proto.set_block_x(launch.block_x);
  proto.set_grid_x(launch.grid_x);
  proto.set_grid_y(launch.grid_y);
  proto.set_grid_z(launch.grid_z);
  proto.set_m_per_block_x(launch.m_per_block_x);
  proto.set_dynamic_shared_memory(launch.dynamic_shared_memory);
  proto.set_workspace_bytes_per_m_block(launch.workspace_bytes_per_m_block);
  proto.set_counter_bytes_per_m_block(launch.counter_bytes_per_m_block);
  proto.set_programmatic_dependent_launch(launch.programmatic_dependent_launch);
  return proto;
}

void FillKernelProto(const PlanRecordEntry& entry,
                     const ArtifactRecord& artifact, v1::CacheOutcome outcome,
                     bool with_cubin, v1::Kernel* kernel) {
  kernel->set_role(entry.role);
  kernel->set_m_min(entry.m_min);
  kernel->set_m_max(entry.m_max);
  kernel->set_artifact_key(entry.artifact_key);
  kernel->set_entry(artifact.entry);
  if (with_cubin) kernel->set_cubin(artifact.cubin);
  kernel->set_cubin_checksum(artifact.cubin_checksum);
  *kernel->mutable_launch() = LaunchParamsToProto(entry.launch);
  kernel->set_threads_per_block(artifact.threads_per_block);
  kernel->set_dynamic_shared_memory(artifact.dynamic_shared_memory);
  kernel->set_outcome(outcome);
  kernel->set_compile_ms(artifact.compile_ms);
  kernel->set_arch(artifact.arch);
  kernel->set_toolchain(artifact.toolchain);
  kernel->set_config(entry.config.text);
  kernel->set_registers(artifact.registers);
}

}  // namespace hummingd
