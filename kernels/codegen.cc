#include "kernels/codegen.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gemm/wgmma_config.cuh"
#include "kernels/gemm_config.h"
#include "kernels/layer_shape.h"
#include "kernels/plan.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"

namespace hummingd {
namespace {

constexpr char kDequantEntry[] = "hummingd_dequant";
constexpr char kDequantSkeleton[] = "dequant";

// Every token below is produced from a closed enum or an integer; nothing a
// client sends is copied into the source text.

absl::StatusOr<std::string> CodeKindToken(WeightKind kind) {
  switch (kind) {
    case WeightKind::kUint:
      return "CodeKind::kUint";
    case WeightKind::kInt:
      return "CodeKind::kInt";
    case WeightKind::kFloat:
      return "CodeKind::kFloat";
  }
  return absl::InvalidArgumentError(
      absl::StrCat("spec.weight.kind: unknown value ", static_cast<int>(kind)));
}

absl::StatusOr<std::string> ScalarTypeToken(DataType type,
                                            std::string_view field) {
  switch (type) {
    case DataType::kFp16:
      return "ScalarType::kFp16";
    case DataType::kBf16:
      return "ScalarType::kBf16";
    case DataType::kFp32:
      return "ScalarType::kFp32";
    case DataType::kE4m3:
      return "ScalarType::kE4m3";
    case DataType::kE5m2:
      return "ScalarType::kE5m2";
    case DataType::kUe8m0:
      return "ScalarType::kUe8m0";
    case DataType::kInt8:
    case DataType::kInt4:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(field), ": ", DataTypeName(type),
                   " is not a dequant scalar type"));
}

absl::StatusOr<std::string> ScaleLayoutToken(ScaleGranularity granularity) {
  switch (granularity) {
    case ScaleGranularity::kGroup:
      return "ScaleLayout::kGroup";
    case ScaleGranularity::kChannel:
      return "ScaleLayout::kChannel";
    case ScaleGranularity::kBlock:
      return "ScaleLayout::kBlock";
    case ScaleGranularity::kTensor:
      return "ScaleLayout::kTensor";
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "spec.granularity: unknown value ", static_cast<int>(granularity)));
}

absl::StatusOr<std::string> ZeroKindToken(ZeroPointKind zero) {
  switch (zero) {
    case ZeroPointKind::kNone:
      return "ZeroKind::kNone";
    case ZeroPointKind::kInteger:
      return "ZeroKind::kInteger";
    case ZeroPointKind::kFloat:
      return "ZeroKind::kFloat";
  }
  return absl::InvalidArgumentError(
      absl::StrCat("spec.zero_point: unknown value ", static_cast<int>(zero)));
}

absl::StatusOr<std::string> SecondaryKindToken(SecondaryScale secondary) {
  switch (secondary) {
    case SecondaryScale::kNone:
      return "SecondaryKind::kNone";
    case SecondaryScale::kTensor:
      return "SecondaryKind::kTensor";
    case SecondaryScale::kChannel:
      return "SecondaryKind::kChannel";
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "spec.secondary_scale: unknown value ", static_cast<int>(secondary)));
}

// (block_n, block_k) of DequantConfig: which rows x columns one scale covers
// for group and block scales; unused (0) for channel and tensor scales.
struct ScaleBlock {
  int n = 0;
  int k = 0;
};

ScaleBlock ScaleBlockOf(const QuantSpec& spec) {
  switch (spec.granularity) {
    case ScaleGranularity::kGroup:
      return {1, spec.group_size};
    case ScaleGranularity::kBlock:
      return {spec.block_n, spec.block_k};
    case ScaleGranularity::kChannel:
    case ScaleGranularity::kTensor:
      break;
  }
  return {0, 0};
}

// The device config asserts these too, but as a compile error; a request
// that reaches codegen unvalidated gets a clear status instead.
absl::Status CheckDequantPreconditions(const KernelRequest& request,
                                       const KernelConfig& config) {
  if (config.family != KernelFamily::kDequant ||
      config.skeleton != kDequantSkeleton) {
    return absl::InvalidArgumentError(
        absl::StrCat("config.skeleton: the dequant family needs skeleton '",
                     kDequantSkeleton, "' (got '", config.skeleton, "')"));
  }
  if (config.threads_per_block < 32 || config.threads_per_block > 1024 ||
      config.threads_per_block % 32 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "config.threads_per_block: must be a multiple of 32 in [32, 1024] "
        "(got ",
        config.threads_per_block, ")"));
  }
  const LayerShape& shape = request.shape;
  if (shape.n <= 0 || shape.k <= 0 || shape.k % 32 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape: the dequant kernel needs N > 0 and K a positive multiple of "
        "32 (got N=",
        shape.n, ", K=", shape.k, ")"));
  }
  const ScaleBlock block = ScaleBlockOf(request.spec);
  if ((block.n > 0 && shape.n % block.n != 0) ||
      (block.k > 0 && shape.k % block.k != 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape: N=", shape.n, ", K=", shape.k,
                     " must be multiples of the scale tile (", block.n, " x ",
                     block.k, ")"));
  }
  return absl::OkStatus();
}

// The closed tokens of a spec's weight format, which every stub's format
// type (DequantConfig, GemmFormat) takes first.
struct FormatTokens {
  std::string kind, layout, scale, zero, secondary;
};

absl::StatusOr<FormatTokens> ResolveFormatTokens(const QuantSpec& spec) {
  FormatTokens tokens;
  ASSIGN_OR_RETURN(tokens.kind, CodeKindToken(spec.weight.kind));
  ASSIGN_OR_RETURN(tokens.layout, ScaleLayoutToken(spec.granularity));
  ASSIGN_OR_RETURN(tokens.scale,
                   ScalarTypeToken(spec.scale_type, "spec.scale_type"));
  ASSIGN_OR_RETURN(tokens.zero, ZeroKindToken(spec.zero_point));
  ASSIGN_OR_RETURN(tokens.secondary, SecondaryKindToken(spec.secondary_scale));
  return tokens;
}

// The format's leading template arguments (code kind and widths, scale
// layout and block, scale / zero-point / secondary kinds), three lines.
void AppendFormatArguments(std::string& text, const QuantSpec& spec,
                           const FormatTokens& tokens) {
  const bool is_float = spec.weight.kind == WeightKind::kFloat;
  const ScaleBlock block = ScaleBlockOf(spec);
  absl::StrAppend(
      &text, "    /*kind=*/hd::", tokens.kind, ", /*bits=*/", spec.weight.bits,
      ", /*exponent_bits=*/", is_float ? spec.weight.exponent_bits : 0,
      ", /*mantissa_bits=*/", is_float ? spec.weight.mantissa_bits : 0, ",\n");
  absl::StrAppend(&text, "    /*scale_layout=*/hd::", tokens.layout,
                  ", /*scale_block_n=*/", block.n, ", /*scale_block_k=*/",
                  block.k, ",\n");
  absl::StrAppend(&text, "    /*scale_type=*/hd::", tokens.scale,
                  ", /*zero=*/hd::", tokens.zero,
                  ", /*secondary=*/hd::", tokens.secondary, ",\n");
}

// The DequantConfig both the dequant and the quantize stubs instantiate.
void AppendDequantConfig(std::string& text, const QuantSpec& spec,
                         const LayerShape& shape, const FormatTokens& format,
                         absl::string_view activation,
                         absl::string_view output) {
  absl::StrAppend(&text, "using Config = hd::DequantConfig<\n");
  AppendFormatArguments(text, spec, format);
  absl::StrAppend(&text, "    /*activation_type=*/hd::", activation,
                  ", /*output_type=*/hd::", output, ",\n");
  absl::StrAppend(&text, "    /*n=*/", shape.n, "LL, /*k=*/", shape.k,
                  "LL>;\n");
}

absl::StatusOr<KernelSource> GenerateDequantStub(const KernelRequest& request,
                                                 const KernelConfig& config) {
  const QuantSpec& spec = request.spec;
  // Cheap insurance: an invalid spec would otherwise surface as a
  // static_assert in the compiler log.
  RETURN_IF_ERROR(ValidateSpec(spec));
  RETURN_IF_ERROR(CheckDequantPreconditions(request, config));
  ASSIGN_OR_RETURN(const FormatTokens format, ResolveFormatTokens(spec));
  ASSIGN_OR_RETURN(const std::string output,
                   ScalarTypeToken(spec.output_type, "spec.output_type"));
  // Only a float zero point reads the activation dtype; other specs get a
  // fixed token so that 8-bit activations (not a dequant scalar type) and
  // changes to an unused field never alter the stub.
  std::string activation = "ScalarType::kFp16";
  if (spec.zero_point == ZeroPointKind::kFloat) {
    ASSIGN_OR_RETURN(activation, ScalarTypeToken(spec.activation_type,
                                                 "spec.activation_type"));
  }
  KernelSource source;
  source.entry = kDequantEntry;
  source.name = "hummingd_dequant.cu";
  // One statement per line of the stub.
  std::string& text = source.source;
  absl::StrAppend(&text, "// Generated by hummingd codegen (stub v",
                  kStubGeneratorVersion, "): ", FormatSpecText(spec),
                  ", N=", request.shape.n, ", K=", request.shape.k, ".\n");
  absl::StrAppend(&text, "#include \"gemm/dequant_kernel.cuh\"\n\n");
  absl::StrAppend(&text, "namespace {\n");
  absl::StrAppend(&text, "namespace hd = ::hummingd::device;\n");
  AppendDequantConfig(text, spec, request.shape, format, activation, output);
  absl::StrAppend(&text, "}  // namespace\n\n");
  absl::StrAppend(&text, "extern \"C\" __global__ void __launch_bounds__(",
                  config.threads_per_block, ") ", kDequantEntry,
                  "(hummingd::DequantArgs args) {\n");
  absl::StrAppend(&text, "  hd::run_dequant<Config, ", config.threads_per_block,
                  ">(args, threadIdx.x, blockIdx.x);\n");
  absl::StrAppend(&text, "}\n");
  return source;
}

// ---- GEMM family: the WNA16 skeleton and the weight repack ----

absl::Status CheckGemmShape(const LayerShape& shape) {
  if (shape.kind != GemmKind::kDense) {
    return absl::UnimplementedError(
        "shape.kind: only dense GEMMs have a code generator so far");
  }
  RETURN_IF_ERROR(CheckGemmUnits(shape.n, shape.k));
  return absl::OkStatus();
}

absl::StatusOr<KernelSource> GenerateRepackStub(const KernelRequest& request,
                                                const KernelConfig& config) {
  RETURN_IF_ERROR(ValidateSpec(request.spec));
  RETURN_IF_ERROR(CheckGemmShape(request.shape));
  if (config.threads_per_block != kRepackThreads ||
      config.text != absl::StrCat("threads=", kRepackThreads)) {
    return absl::InvalidArgumentError(
        absl::StrCat("config: the repack kernel runs ", kRepackThreads,
                     " threads (got '", config.text, "')"));
  }
  KernelSource source;
  source.entry = kRepackEntry;
  source.name = "hummingd_repack.cu";
  std::string& text = source.source;
  absl::StrAppend(&text, "// Generated by hummingd codegen (stub v",
                  kStubGeneratorVersion,
                  "): repack bits=", request.spec.weight.bits,
                  ", N=", request.shape.n, ", K=", request.shape.k, ".\n");
  absl::StrAppend(&text, "#include \"pack/repack_weights.cuh\"\n\n");
  absl::StrAppend(&text, "extern \"C\" __global__ void __launch_bounds__(",
                  kRepackThreads, ") ", kRepackEntry,
                  "(hummingd::RepackArgs args) {\n");
  absl::StrAppend(&text, "  ::hummingd::device::run_repack<",
                  request.spec.weight.bits, ", ", request.shape.n, "LL, ",
                  request.shape.k, "LL>(args, static_cast<long long>(",
                  "blockIdx.x) * ", kRepackThreads, " + threadIdx.x);\n");
  absl::StrAppend(&text, "}\n");
  return source;
}

absl::StatusOr<KernelSource> GenerateGemmStub(const KernelRequest& request,
                                              const KernelConfig& config) {
  const QuantSpec& spec = request.spec;
  RETURN_IF_ERROR(ValidateSpec(spec));
  RETURN_IF_ERROR(CheckGemmShape(request.shape));
  ASSIGN_OR_RETURN(const GemmTileConfig tile, ParseGemmTileText(config.text));
  RETURN_IF_ERROR(ValidateGemmTile(tile, request.shape.n, request.shape.k));
  if (config.skeleton != tile.Skeleton()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config.skeleton: ", config.text, " belongs to skeleton '",
                     tile.Skeleton(), "' (got '", config.skeleton, "')"));
  }
  if (tile.mma == GemmMma::kWgmma &&
      !(request.gpu.sm == 90 && request.gpu.arch_specific)) {
    return absl::InvalidArgumentError(
        absl::StrCat("config.text: wgmma kernels need sm_90a (got ",
                     request.gpu.ArchName(), ")"));
  }
  if (config.threads_per_block != tile.Threads()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "config.threads_per_block: must be ", tile.Threads(), " for ",
        config.text, " (got ", config.threads_per_block, ")"));
  }
  if (spec.activation_type != DataType::kFp16 &&
      spec.activation_type != DataType::kBf16) {
    return absl::UnimplementedError(
        "spec.activation_type: the gemm family takes fp16 or bf16");
  }
  ASSIGN_OR_RETURN(const FormatTokens format, ResolveFormatTokens(spec));
  ASSIGN_OR_RETURN(
      const std::string activation,
      ScalarTypeToken(spec.activation_type, "spec.activation_type"));
  ASSIGN_OR_RETURN(const std::string output,
                   ScalarTypeToken(spec.output_type, "spec.output_type"));

  KernelSource source;
  source.entry = kGemmEntry;
  source.name = "hummingd_gemm.cu";
  std::string& text = source.source;
  absl::StrAppend(&text, "// Generated by hummingd codegen (stub v",
                  kStubGeneratorVersion, "): ", FormatSpecText(spec),
                  ", N=", request.shape.n, ", K=", request.shape.k, ", ",
                  FormatGemmTileText(tile), ".\n");
  const bool wgmma = tile.mma == GemmMma::kWgmma;
  absl::StrAppend(&text, wgmma ? "#include \"gemm/wgmma_gemm.cuh\"\n\n"
                               : "#include \"gemm/wna16_gemm.cuh\"\n\n");
  absl::StrAppend(&text, "namespace {\n");
  absl::StrAppend(&text, "namespace hd = ::hummingd::device;\n");
  absl::StrAppend(&text, "using Format = hd::GemmFormat<\n");
  AppendFormatArguments(text, spec, format);
  absl::StrAppend(&text, "    /*activation_type=*/hd::", activation,
                  ", /*output_type=*/hd::", output, ", /*has_bias=*/",
                  spec.has_bias ? "true" : "false", ">;\n");
  // wgmma decode tiles run WgmmaBlocksPerSm blocks per SM: the launch
  // bounds cap the registers so that they fit (two blocks of 256 threads:
  // 128 each), and the tile names them where not two, so that the skeleton
  // knows the cap (it unrolls its k-loop only under 128 or more).
  const int blocks_per_sm = wgmma ? WgmmaBlocksPerSm(tile) : 0;
  if (wgmma) {
    // Trailing arguments only when set (or when a later one is): the stubs
    // of two-per-SM tiles without options stay as they were.
    const bool warp_run_set = tile.warp_run_weights;
    const bool early_set = tile.early_tiles > 0 || warp_run_set;
    const bool blocks_set =
        blocks_per_sm != device::kWgmmaDefaultBlocksPerSm || early_set;
    const bool split_set = tile.warp_split_k > 1 || blocks_set;
    const bool k_major_set = tile.k_major_scales || split_set;
    const bool prescaled_set = tile.prescaled_scales || k_major_set;
    absl::StrAppend(
        &text, "using Tile = hd::WgmmaTile<", tile.block_m, ", ", tile.block_n,
        ", ", tile.block_k, ", ", tile.warps_n / 4, ", ", tile.stages, ", ",
        tile.bulk_weights ? "true" : "false",
        prescaled_set ? (tile.prescaled_scales ? ", true" : ", false") : "",
        k_major_set ? (tile.k_major_scales ? ", true" : ", false") : "",
        split_set ? absl::StrCat(", ", tile.warp_split_k) : "",
        blocks_set ? absl::StrCat(", ", blocks_per_sm) : "",
        early_set ? absl::StrCat(", ", tile.early_tiles) : "",
        warp_run_set ? ", true" : "", ">;\n");
    absl::StrAppend(&text, "using Config = hd::WgmmaConfig<Format, Tile, ",
                    request.shape.n, "LL, ", request.shape.k, "LL>;\n");
  } else {
    absl::StrAppend(&text, "using Tile = hd::GemmTile<", tile.block_m, ", ",
                    tile.block_n, ", ", tile.block_k, ", ", tile.warps_m, ", ",
                    tile.warps_n, ", ", tile.stages, ">;\n");
    absl::StrAppend(&text, "using Config = hd::Wna16Config<Format, Tile, ",
                    request.shape.n, "LL, ", request.shape.k, "LL>;\n");
  }
  absl::StrAppend(&text, "}  // namespace\n\n");
  absl::StrAppend(&text, "extern \"C\" __global__ void __launch_bounds__(",
                  tile.Threads(),
                  wgmma ? absl::StrCat(", ", blocks_per_sm) : "", ") ",
                  kGemmEntry, "(hummingd::GemmArgs args) {\n");
  // Tiles in grouped order remap their (m-block, n-block)
  // (schedule/block_order.cuh); the stubs of tiles without the option stay
  // byte-identical.
  const char* block_mn = "blockIdx.x, blockIdx.y";
  if (wgmma && tile.grouped_order) {
    absl::StrAppend(&text,
                    "  const hd::BlockCoord block = "
                    "hd::grouped_block_order<hd::kGemmBlockGroupN>(\n"
                    "      blockIdx.x, blockIdx.y, gridDim.x, gridDim.y);\n");
    block_mn = "block.m, block.n";
  }
  absl::StrAppend(&text, "  hd::", wgmma ? "run_wgmma_gemm" : "run_wna16_gemm",
                  "<Config>(args, threadIdx.x, ", block_mn,
                  ", blockIdx.z, gridDim.z);\n");
  absl::StrAppend(&text, "}\n");
  return source;
}

absl::StatusOr<KernelSource> GenerateGemmFamilyStub(
    const KernelRequest& request, const KernelConfig& config) {
  if (config.family != KernelFamily::kGemm) {
    return absl::InvalidArgumentError(
        "config.family: a gemm request needs a gemm config");
  }
  if (config.skeleton == kGemmSkeleton ||
      config.skeleton == kGemmWgmmaSkeleton) {
    return GenerateGemmStub(request, config);
  }
  if (config.skeleton == kRepackSkeleton) {
    return GenerateRepackStub(request, config);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("config.skeleton: the gemm family has skeletons '",
                   kGemmSkeleton, "', '", kGemmWgmmaSkeleton, "' and '",
                   kRepackSkeleton, "' (got '", config.skeleton, "')"));
}

// ---- Quantize-from-float (either family) ----

absl::StatusOr<KernelSource> GenerateQuantizeStub(const KernelRequest& request,
                                                  const KernelConfig& config) {
  const QuantSpec& spec = request.spec;
  RETURN_IF_ERROR(CheckQuantizeRequest(request));
  if (config.family != request.family ||
      config.threads_per_block != kQuantizeThreads ||
      config.text != absl::StrCat("threads=", kQuantizeThreads)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "config: the quantize kernel runs ", kQuantizeThreads,
        " threads in the request's family (got '", config.text, "')"));
  }
  ASSIGN_OR_RETURN(const FormatTokens format, ResolveFormatTokens(spec));
  ASSIGN_OR_RETURN(
      const std::string activation,
      ScalarTypeToken(spec.activation_type, "spec.activation_type"));
  KernelSource source;
  source.entry = kQuantizeEntry;
  source.name = "hummingd_quantize.cu";
  std::string& text = source.source;
  absl::StrAppend(&text, "// Generated by hummingd codegen (stub v",
                  kStubGeneratorVersion, "): quantize ", FormatSpecText(spec),
                  ", N=", request.shape.n, ", K=", request.shape.k, ".\n");
  absl::StrAppend(&text, "#include \"pack/quantize.cuh\"\n\n");
  absl::StrAppend(&text, "namespace {\n");
  absl::StrAppend(&text, "namespace hd = ::hummingd::device;\n");
  // The dequant config carries every compile-time fact the quantizer needs;
  // its output type is unused and fixed so it never alters the stub.
  AppendDequantConfig(text, spec, request.shape, format, activation,
                      "ScalarType::kFp16");
  absl::StrAppend(&text, "}  // namespace\n\n");
  absl::StrAppend(&text, "extern \"C\" __global__ void __launch_bounds__(",
                  kQuantizeThreads, ") ", kQuantizeEntry,
                  "(hummingd::QuantizeArgs args) {\n");
  absl::StrAppend(&text, "  hd::run_quantize<Config>(args, (static_cast<long ",
                  "long>(blockIdx.x) * ", kQuantizeThreads,
                  " + threadIdx.x) / 32, static_cast<int>(threadIdx.x % ",
                  "32));\n");
  absl::StrAppend(&text, "}\n");
  return source;
}

}  // namespace

absl::StatusOr<KernelSource> GenerateStub(const KernelRequest& request,
                                          const KernelConfig& config) {
  if (config.skeleton == kQuantizeSkeleton) {
    return GenerateQuantizeStub(request, config);
  }
  switch (request.family) {
    case KernelFamily::kDequant:
      return GenerateDequantStub(request, config);
    case KernelFamily::kGemm:
      return GenerateGemmFamilyStub(request, config);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("family: unknown value ", static_cast<int>(request.family)));
}

}  // namespace hummingd
