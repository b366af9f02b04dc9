#include "ctl/commands.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ctl/manifest.h"
#include "ctl/option_parser.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "hummingd/v1/kernel_service.grpc.pb.h"
#include "kernels/launch_abi.h"

namespace hummingd {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

void SetDeadline(const CtlContext& context, grpc::ClientContext* call) {
  call->set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(context.timeout_seconds));
}

int ReportRpcError(const CtlContext& context, absl::string_view what,
                   const grpc::Status& status) {
  *context.err << "hummingctl: " << what << " failed: "
               << (status.error_code() == grpc::StatusCode::UNAVAILABLE
                       ? absl::StrCat("daemon unavailable at ",
                                      context.socket_path, " (",
                                      status.error_message(), ")")
                       : absl::StrCat(status.error_message()))
               << " [code " << status.error_code() << "]\n";
  return kExitFailed;
}

int UsageError(const CtlContext& context, absl::string_view message) {
  *context.err << "hummingctl: " << message << "\n";
  return kExitUsage;
}

std::string OutcomeName(v1::CacheOutcome outcome) {
  switch (outcome) {
    case v1::CACHE_OUTCOME_HIT:
      return "hit";
    case v1::CACHE_OUTCOME_COMPILED:
      return "miss";
    case v1::CACHE_OUTCOME_SHARED:
      return "miss(shared)";
    default:
      return "?";
  }
}

std::string RangeText(int64_t low, int64_t high) {
  return absl::StrCat(low, "..", high);
}

// A uint32 request field's option (--launch-abi, --max-m), `fallback` when
// absent.
absl::StatusOr<uint32_t> Uint32Option(const ParsedOptions& parsed,
                                      const std::string& name,
                                      uint32_t fallback) {
  const absl::StatusOr<int64_t> parsed_value =
      parsed.GetInt(name, int64_t{fallback});
  if (!parsed_value.ok()) return parsed_value.status();
  const int64_t value = *parsed_value;
  if (value < 0 || value > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", name, ": must be a non-negative 32-bit integer (got ", value,
        ")"));
  }
  return static_cast<uint32_t>(value);
}

// --launch-abi: the clients' launch ABI to plan for. Defaults to the current
// one, what clients of this build send, so `get` shows and `prefetch` warms
// the plans they will ask for; a lower value serves older clients. The
// daemon refuses values above its own.
absl::StatusOr<uint32_t> LaunchAbiOption(const ParsedOptions& parsed) {
  return Uint32Option(parsed, "launch-abi", kCurrentLaunchAbi);
}

// --max-m: KernelRequest.max_m, the largest M the clients will launch: only
// the M ranges serving some M <= max_m are compiled. 0 = every range.
absl::StatusOr<uint32_t> MaxMOption(const ParsedOptions& parsed) {
  return Uint32Option(parsed, "max-m", 0);
}

}  // namespace

int RunGetCommand(const CtlContext& context,
                  const std::vector<std::string>& args) {
  auto parsed =
      ParseOptions(args,
                   {"kind", "spec", "n", "k", "arch", "out", "gemm-kind",
                    "experts", "top-k", "name", "launch-abi", "max-m"},
                   {"metadata-only"});
  if (!parsed.ok()) return UsageError(context, parsed.status().message());
  for (const char* required : {"spec", "n", "k", "arch"}) {
    if (!parsed->Has(required)) {
      return UsageError(context,
                        absl::StrCat("get: --", required, " is required"));
    }
  }
  v1::GetKernelsRequest rpc_request;
  v1::KernelRequest* request = rpc_request.mutable_request();
  const std::string family = parsed->Get("kind", "dequant");
  if (family == "dequant") {
    request->set_family(v1::KERNEL_FAMILY_DEQUANT);
  } else if (family == "gemm") {
    request->set_family(v1::KERNEL_FAMILY_GEMM);
  } else {
    return UsageError(context, absl::StrCat("get: --kind must be dequant or "
                                            "gemm (got '",
                                            family, "')"));
  }
  request->set_name(parsed->Get("name"));
  request->mutable_spec()->set_text(parsed->Get("spec"));
  auto n = parsed->GetInt("n", 0);
  auto k = parsed->GetInt("k", 0);
  auto experts = parsed->GetInt("experts", 0);
  auto top_k = parsed->GetInt("top-k", 0);
  for (const auto* value : {&n, &k, &experts, &top_k}) {
    if (!value->ok()) return UsageError(context, value->status().message());
  }
  request->mutable_shape()->set_n(*n);
  request->mutable_shape()->set_k(*k);
  request->mutable_shape()->set_experts(*experts);
  request->mutable_shape()->set_top_k(*top_k);
  const std::string gemm_kind = parsed->Get("gemm-kind", "dense");
  if (gemm_kind == "dense") {
    request->mutable_shape()->set_kind(v1::GEMM_KIND_DENSE);
  } else if (gemm_kind == "moe_indexed") {
    request->mutable_shape()->set_kind(v1::GEMM_KIND_MOE_INDEXED);
  } else if (gemm_kind == "moe_grouped") {
    request->mutable_shape()->set_kind(v1::GEMM_KIND_MOE_GROUPED);
  } else {
    return UsageError(context,
                      "get: --gemm-kind must be dense, moe_indexed "
                      "or moe_grouped");
  }
  request->mutable_gpu()->set_arch(parsed->Get("arch"));
  absl::StatusOr<uint32_t> launch_abi = LaunchAbiOption(*parsed);
  if (!launch_abi.ok()) {
    return UsageError(context,
                      absl::StrCat("get: ", launch_abi.status().message()));
  }
  request->set_launch_abi(*launch_abi);
  absl::StatusOr<uint32_t> max_m = MaxMOption(*parsed);
  if (!max_m.ok()) {
    return UsageError(context, absl::StrCat("get: ", max_m.status().message()));
  }
  request->set_max_m(*max_m);
  rpc_request.set_metadata_only(parsed->switches.count("metadata-only") > 0 &&
                                !parsed->Has("out"));

  auto stub = v1::KernelService::NewStub(context.channel);
  grpc::ClientContext call;
  SetDeadline(context, &call);
  v1::GetKernelsResponse response;
  grpc::Status status = stub->GetKernels(&call, rpc_request, &response);
  if (!status.ok()) return ReportRpcError(context, "get", status);

  const v1::KernelSet& set = response.kernel_set();
  *context.out << "spec: " << set.canonical_spec() << "\n";
  *context.out << "plan: " << set.plan_key().substr(0, 16)
               << (set.plan_cached() ? " (cached)" : " (planned)") << "\n";
  if (set.max_m() > 0) {
    *context.out << "max_m: " << set.max_m()
                 << " (the ranges serving M <= " << set.max_m() << ")\n";
  } else if (*max_m > 0) {
    // Asked for a cut and served the whole set: say why, so that a script
    // does not take the extra kernels for a daemon bug.
    *context.out << "max_m: 0 (every range: "
                 << (set.family() == v1::KERNEL_FAMILY_DEQUANT
                         ? "a dequant set serves every M"
                         : "the daemon predates max_m")
                 << ")\n";
  }
  *context.out << absl::StrFormat("%-18s %-22s %9s %-13s %11s  %s\n", "M-range",
                                  "entry", "bytes", "outcome", "compile_ms",
                                  "artifact");
  std::map<std::string, std::string> cubins;
  for (const auto* kernels : {&set.kernels(), &set.prepare()}) {
    for (const v1::Kernel& kernel : *kernels) {
      if (!kernel.cubin().empty()) {
        cubins[kernel.artifact_key()] = kernel.cubin();
      }
    }
  }
  auto print_row = [&](const v1::Kernel& kernel, const std::string& range) {
    const auto cubin = cubins.find(kernel.artifact_key());
    const size_t bytes = cubin == cubins.end() ? 0 : cubin->second.size();
    *context.out << absl::StrFormat(
        "%-18s %-22s %9d %-13s %11.1f  %s\n", range, kernel.entry(), bytes,
        OutcomeName(kernel.outcome()), kernel.compile_ms(),
        kernel.artifact_key().substr(0, 16));
  };
  for (const v1::Kernel& kernel : set.kernels()) {
    print_row(kernel, RangeText(kernel.m_min(), kernel.m_max()));
  }
  // Kernels run once when weights are prepared (e.g. the GEMM repack).
  for (const v1::Kernel& kernel : set.prepare()) {
    print_row(kernel, "prepare:" + kernel.role());
  }
  if (parsed->Has("out")) {
    const std::filesystem::path out_dir(parsed->Get("out"));
    std::error_code error;
    std::filesystem::create_directories(out_dir, error);
    if (error) {
      *context.err << "hummingctl: cannot create " << out_dir << ": "
                   << error.message() << "\n";
      return kExitFailed;
    }
    for (const auto& [key, bytes] : cubins) {
      const std::filesystem::path file = out_dir / (key + ".cubin");
      std::ofstream stream(file, std::ios::binary | std::ios::trunc);
      stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!stream) {
        *context.err << "hummingctl: cannot write " << file << "\n";
        return kExitFailed;
      }
      *context.out << "wrote " << file.string() << "\n";
    }
  }
  return kExitOk;
}

int RunPrefetchCommand(const CtlContext& context,
                       const std::vector<std::string>& args) {
  auto parsed = ParseOptions(args, {"arch", "launch-abi", "max-m"}, {"quiet"});
  if (!parsed.ok()) return UsageError(context, parsed.status().message());
  if (parsed->positional.size() != 1) {
    return UsageError(context, "prefetch: exactly one MANIFEST file expected");
  }
  ManifestOptions options;
  options.arch_override = parsed->Get("arch");
  absl::StatusOr<uint32_t> launch_abi = LaunchAbiOption(*parsed);
  if (!launch_abi.ok()) {
    return UsageError(
        context, absl::StrCat("prefetch: ", launch_abi.status().message()));
  }
  options.launch_abi = *launch_abi;
  if (parsed->Has("max-m")) {
    absl::StatusOr<uint32_t> max_m = MaxMOption(*parsed);
    if (!max_m.ok()) {
      return UsageError(context,
                        absl::StrCat("prefetch: ", max_m.status().message()));
    }
    options.max_m_override = *max_m;
  }
  auto requests = LoadManifestFile(parsed->positional[0], options);
  if (!requests.ok()) {
    *context.err << "hummingctl: " << requests.status().message() << "\n";
    return kExitUsage;
  }
  v1::PrefetchRequest rpc_request;
  for (v1::KernelRequest& request : *requests) {
    *rpc_request.add_requests() = std::move(request);
  }
  auto stub = v1::KernelService::NewStub(context.channel);
  grpc::ClientContext call;
  SetDeadline(context, &call);
  auto reader = stub->Prefetch(&call, rpc_request);
  v1::PrefetchProgress progress;
  int64_t kernels = 0, compiled = 0, cached = 0, failed = 0;
  double elapsed_ms = 0;
  const bool quiet = parsed->switches.count("quiet") > 0;
  while (reader->Read(&progress)) {
    kernels += progress.kernels();
    compiled += progress.compiled();
    cached += progress.cached();
    elapsed_ms = progress.elapsed_ms();
    const bool ok = progress.status_code() == 0;
    if (!ok) ++failed;
    if (!quiet || !ok) {
      *context.out << absl::StrFormat(
          "[%d/%d] %-24s ", progress.index() + 1, progress.total(),
          progress.name().empty() ? "-" : progress.name());
      if (ok) {
        *context.out << absl::StrFormat(
            "%d kernel(s): %d compiled, %d cached  (%.0f ms)\n",
            progress.kernels(), progress.compiled(), progress.cached(),
            progress.elapsed_ms());
      } else {
        *context.out << "FAILED: " << progress.status_message() << "\n";
      }
    }
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return ReportRpcError(context, "prefetch", status);
  *context.out << absl::StrFormat(
      "prefetch: %d layers, %d kernels: %d compiled, %d cached, %d failed in "
      "%.1f s\n",
      rpc_request.requests_size(), kernels, compiled, cached, failed,
      elapsed_ms / 1000.0);
  return failed == 0 ? kExitOk : kExitFailed;
}

int RunStatsCommand(const CtlContext& context,
                    const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(context, "stats: takes no arguments");
  auto stub = v1::KernelService::NewStub(context.channel);
  grpc::ClientContext call;
  SetDeadline(context, &call);
  v1::StatsResponse response;
  grpc::Status status = stub->Stats(&call, v1::StatsRequest(), &response);
  if (!status.ok()) return ReportRpcError(context, "stats", status);
  std::map<std::string, int64_t> sorted(response.counters().begin(),
                                        response.counters().end());
  for (const auto& [name, value] : sorted) {
    *context.out << name << ": " << value << "\n";
  }
  return kExitOk;
}

int RunListCommand(const CtlContext& context,
                   const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(context, "ls: takes no arguments");
  auto stub = v1::KernelService::NewStub(context.channel);
  grpc::ClientContext call;
  SetDeadline(context, &call);
  v1::ListEntriesResponse response;
  grpc::Status status =
      stub->ListEntries(&call, v1::ListEntriesRequest(), &response);
  if (!status.ok()) return ReportRpcError(context, "ls", status);
  *context.out << absl::StrFormat("%-64s %-8s %9s %10s %s\n", "artifact",
                                  "arch", "bytes", "compile_ms", "kernel");
  for (const v1::CacheEntry& entry : response.entries()) {
    *context.out << absl::StrFormat(
        "%-64s %-8s %9d %10.1f %s%s\n", entry.artifact_key(), entry.arch(),
        entry.bytes(), entry.compile_ms(), entry.description(),
        entry.pinned() ? " [pinned]" : "");
  }
  *context.out << response.entries_size() << " entries\n";
  return kExitOk;
}

int RunEvictCommand(const CtlContext& context,
                    const std::vector<std::string>& args) {
  auto parsed = ParseOptions(args, {}, {"all"});
  if (!parsed.ok()) return UsageError(context, parsed.status().message());
  v1::EvictRequest request;
  request.set_all(parsed->switches.count("all") > 0);
  for (const std::string& key : parsed->positional) {
    request.add_artifact_keys(key);
  }
  if (request.all() == (request.artifact_keys_size() > 0)) {
    return UsageError(context,
                      "evict: give --all or one or more artifact keys");
  }
  auto stub = v1::KernelService::NewStub(context.channel);
  grpc::ClientContext call;
  SetDeadline(context, &call);
  v1::EvictResponse response;
  grpc::Status status = stub->Evict(&call, request, &response);
  if (!status.ok()) return ReportRpcError(context, "evict", status);
  *context.out << "evicted: " << response.evicted() << "\n";
  return kExitOk;
}

int RunHealthCommand(const CtlContext& context,
                     const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(context, "health: takes no arguments");
  auto stub = grpc::health::v1::Health::NewStub(context.channel);
  grpc::ClientContext call;
  call.set_deadline(std::chrono::system_clock::now() +
                    std::chrono::seconds(std::min(context.timeout_seconds, 5)));
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status =
      stub->Check(&call, grpc::health::v1::HealthCheckRequest(), &response);
  if (!status.ok()) return ReportRpcError(context, "health", status);
  const bool serving =
      response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
  *context.out << (serving ? "SERVING" : "NOT_SERVING") << "\n";
  return serving ? kExitOk : kExitFailed;
}

}  // namespace hummingd
