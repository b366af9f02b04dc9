#include "server/kernel_resolver.h"

#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "cache/keys.h"
#include "common/hashing.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "kernels/codegen.h"
#include "kernels/cubin_info.h"
#include "kernels/nvrtc_compiler.h"
#include "kernels/planner.h"
#include "server/proto_convert.h"
#include "server/served_ranges.h"

namespace hummingd {
namespace {

std::string Describe(const KernelRequest& request,
                     const std::string& canonical_spec) {
  return absl::StrCat(KernelFamilyName(request.family), " ", canonical_spec,
                      " n=", request.shape.n, " k=", request.shape.k);
}

// Recomputed on every resolution, never trusted from a stored plan: a plan
// outlives a daemon upgrade (new headers or NVRTC), its artifacts must not.
std::string ArtifactKeyFor(const KernelRequest& request,
                           const std::string& canonical_spec,
                           const KernelConfig& config) {
  ArtifactKeyInputs inputs;
  inputs.codegen_hash = CodegenHash();
  inputs.toolchain = Toolchain().Identity();
  inputs.arch = request.gpu.ArchName();
  inputs.compile_options = CanonicalCompileOptions(request.gpu);
  inputs.canonical_spec = canonical_spec;
  inputs.shape = request.shape;
  inputs.skeleton = config.skeleton;
  inputs.config_text = config.text;
  return ArtifactKey(inputs);
}

// The kernels a family runs once when a layer's weights are prepared (not
// part of the M-range table). The dequant family has none.
struct PreparePlanEntry {
  std::string role;
  PlanEntry entry;
};

absl::StatusOr<std::vector<PreparePlanEntry>> PlanPrepareKernels(
    const KernelRequest& request) {
  std::vector<PreparePlanEntry> prepare;
  if (request.family == KernelFamily::kGemm) {
    // Checkpoint-packed weights -> the GEMM kernels' fragment order.
    ASSIGN_OR_RETURN(PlanEntry repack, PlanRepack(request));
    prepare.push_back(PreparePlanEntry{"repack", std::move(repack)});
  }
  return prepare;
}

}  // namespace

KernelResolver::KernelResolver(KernelStore* store, CompileScheduler* scheduler)
    : store_(store), scheduler_(scheduler) {}

absl::StatusOr<PlanRecord> KernelResolver::BuildPlanRecord(
    const KernelRequest& request, const std::string& canonical_spec) {
  ASSIGN_OR_RETURN(Plan plan, PlanKernels(request));
  ASSIGN_OR_RETURN(std::vector<PreparePlanEntry> prepare,
                   PlanPrepareKernels(request));
  PlanRecord record;
  record.description = Describe(request, canonical_spec);
  auto to_record = [&](const PlanEntry& entry, std::string role) {
    PlanRecordEntry record_entry;
    record_entry.role = std::move(role);
    record_entry.m_min = entry.m_min;
    record_entry.m_max = entry.m_max;
    record_entry.artifact_key =
        ArtifactKeyFor(request, canonical_spec, entry.config);
    record_entry.config = entry.config;
    record_entry.launch = entry.launch;
    return record_entry;
  };
  for (const PlanEntry& entry : plan.entries) {
    record.entries.push_back(to_record(entry, ""));
  }
  for (const PreparePlanEntry& entry : prepare) {
    record.prepare.push_back(to_record(entry.entry, entry.role));
  }
  return record;
}

CompileFunction KernelResolver::MakeCompileFunction(
    const KernelRequest& request, const KernelConfig& config,
    const std::string& artifact_key) {
  return [this, request, config,
          artifact_key]() -> absl::StatusOr<ArtifactPtr> {
    // A concurrent request may have compiled and stored this key between our
    // lookup and our submission; never compile twice.
    absl::StatusOr<ArtifactPtr> stored = store_->GetArtifact(artifact_key);
    if (stored.ok() && *stored != nullptr) return *stored;
    if (ArtifactPtr unstored = FindUnstored(artifact_key)) return unstored;

    ASSIGN_OR_RETURN(KernelSource source, GenerateStub(request, config));
    ASSIGN_OR_RETURN(CompiledKernel compiled,
                     CompileKernel(source, request.gpu));
    compiles_.fetch_add(1, std::memory_order_relaxed);

    ArtifactRecord record;
    record.cubin = std::move(compiled.cubin);
    record.entry = compiled.entry;
    record.threads_per_block = config.threads_per_block;
    record.dynamic_shared_memory = config.dynamic_shared_memory;
    record.compile_ms = compiled.compile_ms;
    record.toolchain = Toolchain().Identity();
    record.arch = request.gpu.ArchName();
    record.description =
        absl::StrCat(Describe(request, FormatSpecText(request.spec)), " ",
                     config.skeleton, "[", config.text, "]");
    record.cubin_checksum = Checksum64(record.cubin);
    // Informational (clients and `hummingctl` show it): the compiler's
    // register count, when the cubin records one.
    if (absl::StatusOr<CubinInfo> info = InspectCubin(record.cubin);
        info.ok()) {
      const auto registers = info->registers.find(record.entry);
      if (registers != info->registers.end()) {
        record.registers = registers->second;
      }
    }
    log::Info(absl::StrCat(
        "event=compiled key=", artifact_key.substr(0, 16),
        " arch=", record.arch, " ms=", static_cast<int64_t>(record.compile_ms),
        " registers=", record.registers, " bytes=", record.cubin.size(),
        " what=\"", record.description, "\""));

    auto artifact = std::make_shared<const ArtifactRecord>(std::move(record));
    absl::Status put = store_->PutArtifact(artifact_key, *artifact);
    if (!put.ok()) {
      // The kernel is still good: serve it, but say loudly that it will not
      // survive a restart.
      store_write_errors_.fetch_add(1, std::memory_order_relaxed);
      log::Error(absl::StrCat("event=cache_write_failed key=", artifact_key,
                              " error=\"", put.message(), "\""));
      KeepUnstored(artifact_key, artifact);
    }
    return artifact;
  };
}

bool KernelResolver::AcceptsPrefetch() const {
  return scheduler_->AcceptsPrefetch();
}

absl::StatusOr<PendingKernelSet> KernelResolver::Begin(
    const KernelRequest& request, CompilePriority priority) {
  PendingKernelSet pending;
  pending.request = request;
  pending.canonical_spec = FormatSpecText(request.spec);

  PlanKeyInputs plan_inputs;
  plan_inputs.family = request.family;
  plan_inputs.canonical_spec = pending.canonical_spec;
  plan_inputs.shape = request.shape;
  plan_inputs.planner_gpu_fields =
      PlannerGpuFields(request.family, request.gpu);
  plan_inputs.planner_version = kPlannerVersion;
  plan_inputs.launch_abi = PlanKeyLaunchAbi(request);
  pending.plan_key = PlanKey(plan_inputs);

  ASSIGN_OR_RETURN(std::optional<PlanRecord> cached_plan,
                   store_->GetPlan(pending.plan_key));
  if (cached_plan.has_value()) {
    pending.plan = *std::move(cached_plan);
    pending.plan_cached = true;
    for (auto* entries : {&pending.plan.entries, &pending.plan.prepare}) {
      for (PlanRecordEntry& entry : *entries) {
        entry.artifact_key =
            ArtifactKeyFor(request, pending.canonical_spec, entry.config);
      }
    }
  } else {
    ASSIGN_OR_RETURN(pending.plan,
                     BuildPlanRecord(request, pending.canonical_spec));
  }
  // The plan is stored only once every artifact is found or admitted to the
  // compile queue (below): a request refused for a full queue leaves no
  // record, so refused requests cannot grow the plan family. The record
  // always holds every range, so requests of any max_m share it.
  std::optional<PlanRecord> plan_to_store;
  if (!pending.plan_cached) plan_to_store = pending.plan;
  pending.plan.entries =
      EntriesServingUpTo(pending.plan.entries, ServedMaxM(request));

  absl::flat_hash_map<std::string, int> seen;
  std::vector<const PlanRecordEntry*> all_entries;
  for (const auto* entries : {&pending.plan.entries, &pending.plan.prepare}) {
    for (const PlanRecordEntry& entry : *entries) all_entries.push_back(&entry);
  }
  for (const PlanRecordEntry* entry_pointer : all_entries) {
    const PlanRecordEntry& entry = *entry_pointer;
    if (!seen.emplace(entry.artifact_key, 0).second) continue;
    PendingKernelSet::Artifact artifact;
    artifact.key = entry.artifact_key;
    ASSIGN_OR_RETURN(artifact.cached, store_->GetArtifact(entry.artifact_key));
    if (artifact.cached == nullptr) {
      artifact.cached = FindUnstored(entry.artifact_key);
    }
    if (artifact.cached != nullptr) {
      artifact.outcome = v1::CACHE_OUTCOME_HIT;
    } else {
      ASSIGN_OR_RETURN(
          CompileScheduler::Submission submission,
          scheduler_->Submit(
              entry.artifact_key, priority,
              MakeCompileFunction(request, entry.config, entry.artifact_key)));
      artifact.ticket = std::move(submission.ticket);
      artifact.outcome = submission.joined_existing
                             ? v1::CACHE_OUTCOME_SHARED
                             : v1::CACHE_OUTCOME_COMPILED;
    }
    pending.artifacts.push_back(std::move(artifact));
  }
  if (plan_to_store.has_value()) {
    absl::Status put = store_->PutPlan(pending.plan_key, *plan_to_store);
    if (!put.ok()) {
      store_write_errors_.fetch_add(1, std::memory_order_relaxed);
      log::Error(
          absl::StrCat("event=cache_write_failed plan=", pending.plan_key,
                       " error=\"", put.message(), "\""));
    }
  }
  return pending;
}

absl::StatusOr<v1::KernelSet> KernelResolver::Finish(
    const PendingKernelSet& pending, absl::Time deadline, bool metadata_only) {
  absl::flat_hash_map<std::string, std::pair<ArtifactPtr, v1::CacheOutcome>>
      artifacts;
  for (const PendingKernelSet::Artifact& artifact : pending.artifacts) {
    ArtifactPtr record = artifact.cached;
    if (record == nullptr) {
      absl::StatusOr<ArtifactPtr> compiled = artifact.ticket->Wait(deadline);
      if (!compiled.ok()) {
        return absl::Status(compiled.status().code(),
                            absl::StrCat("kernel ", artifact.key.substr(0, 16),
                                         " (", pending.plan.description,
                                         "): ", compiled.status().message()));
      }
      record = *compiled;
    }
    artifacts.emplace(artifact.key, std::make_pair(record, artifact.outcome));
  }

  v1::KernelSet set;
  set.set_plan_key(pending.plan_key);
  set.set_canonical_spec(pending.canonical_spec);
  set.set_plan_cached(pending.plan_cached);
  // What planning took into account (0 for families that ignore it), as in
  // the plan key.
  set.set_launch_abi(PlanKeyLaunchAbi(pending.request));
  set.set_max_m(ServedMaxM(pending.request));
  *set.mutable_shape() = KernelRequestToProto(pending.request).shape();
  set.set_family(pending.request.family == KernelFamily::kDequant
                     ? v1::KERNEL_FAMILY_DEQUANT
                     : v1::KERNEL_FAMILY_GEMM);
  absl::flat_hash_map<std::string, int> cubin_sent;
  auto fill = [&](const PlanRecordEntry& entry, v1::Kernel* kernel) {
    const auto& [record, outcome] = artifacts.at(entry.artifact_key);
    const bool with_cubin =
        !metadata_only && cubin_sent.emplace(entry.artifact_key, 0).second;
    FillKernelProto(entry, *record, outcome, with_cubin, kernel);
  };
  for (const PlanRecordEntry& entry : pending.plan.entries) {
    fill(entry, set.add_kernels());
  }
  for (const PlanRecordEntry& entry : pending.plan.prepare) {
    fill(entry, set.add_prepare());
  }
  return set;
}

ArtifactPtr KernelResolver::FindUnstored(const std::string& key) {
  absl::MutexLock lock(&unstored_mutex_);
  auto it = unstored_.find(key);
  return it == unstored_.end() ? nullptr : it->second;
}

void KernelResolver::KeepUnstored(const std::string& key,
                                  ArtifactPtr artifact) {
  constexpr size_t kMaxUnstored = 256;
  absl::MutexLock lock(&unstored_mutex_);
  if (unstored_.size() >= kMaxUnstored) unstored_.clear();
  unstored_[key] = std::move(artifact);
}

ResolverCounters KernelResolver::Counters() const {
  ResolverCounters counters;
  counters.compiles = compiles_.load(std::memory_order_relaxed);
  counters.store_write_errors =
      store_write_errors_.load(std::memory_order_relaxed);
  return counters;
}

}  // namespace hummingd
