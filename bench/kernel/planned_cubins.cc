// hummingd_planned_cubins: compiles every kernel the planner emits for a set
// of specs and layers (default: the decode benchmark's) to cubins, without a
// GPU, so that two trees' kernels can be compared instruction by instruction
// (scripts/sass_compare.sh). A device-code change that claims to leave some
// kernels unchanged, or to shorten their k-loops, is checked this way before
// it takes device time (bench/decode-notes.md).
//
//   hummingd_planned_cubins --out DIR [--arch sm_90a] [--sms 132]
//       [--specs 'a;b'] [--shapes NxK,...]
//   hummingd_planned_cubins --list [--specs ...] [--shapes ...]
//
// DIR/<i>.cubin, one per distinct (spec, layer, tile), and DIR/index.tsv:
// i, spec, NxK, tile text, cubin bytes.
//
// With --sweep FILE (a scripts/tile_sweep.sh file), the override tiles of
// its lines instead: each is checked as the bench's --override checks it
// and compiled, and a line per tile says its registers and stack bytes, so
// that a sweep's candidates are known to build before the device call. A
// tile that fails is reported with its file line; the exit status is then 1.
//
// With --list, nothing is compiled and no folder is needed: one line per
// plan entry (spec, NxK, M range, config text, grid, dynamic shared bytes)
// on stdout, so that two builds' plans diff line by line (a planner change
// names how many plan lines it moves; bench/README.md).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/kernel/decode_cases.h"
#include "bench/kernel/plan_override.h"
#include "kernels/codegen.h"
#include "kernels/cubin_info.h"
#include "kernels/gpu_target.h"
#include "kernels/launch_abi.h"
#include "kernels/nvrtc_compiler.h"
#include "kernels/planner.h"
#include "kernels/quant_spec.h"

ABSL_FLAG(std::string, out, "", "folder for the cubins and index.tsv");
ABSL_FLAG(std::string, arch, "sm_90a", "target arch");
ABSL_FLAG(int, sms, 132, "SM count the planner plans for");
ABSL_FLAG(int, smem_optin, 0,
          "opt-in shared memory per block, bytes (0: the planner's default "
          "for the arch, as the planner tests plan)");
ABSL_FLAG(std::string, specs, hummingd::bench::DecodeSpecsText(),
          "';'-separated specs (text form)");
ABSL_FLAG(std::string, shapes, hummingd::bench::DecodeLayersText(),
          "comma-separated NxK");
ABSL_FLAG(bool, list, false,
          "print every plan entry instead of compiling (no --out needed)");
ABSL_FLAG(std::string, sweep, "",
          "a tile sweep file (SPEC|NxK|MS|OVERRIDE lines): compile its "
          "override tiles instead of the planned kernels");

namespace hummingd {
namespace {

int Fail(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "planned_cubins: %s: %s\n", what.c_str(),
               status.ToString().c_str());
  return 1;
}

KernelRequest GemmRequest(const QuantSpec& spec, const LayerShape& shape,
                          const GpuTarget& gpu) {
  KernelRequest request;
  request.family = KernelFamily::kGemm;
  // As the bench's request (KernelRequestFromProto) carries it.
  request.spec = Canonicalize(spec);
  request.shape = shape;
  request.gpu = gpu;
  request.launch_abi = kCurrentLaunchAbi;
  return request;
}

// `kernel` as out/<count>.cubin with its index line.
void Record(const std::filesystem::path& out, const CompiledKernel& kernel,
            const std::string& key, int count, std::ofstream& index) {
  std::ofstream(out / absl::StrCat(count, ".cubin"), std::ios::binary)
      << kernel.cubin;
  index << count << "\t" << key << "\t" << kernel.cubin.size() << "\n";
}

// "R registers, S bytes of stack" of the kernel's entry function.
std::string RegisterSummary(const CompiledKernel& kernel) {
  absl::StatusOr<CubinInfo> info = InspectCubin(kernel.cubin);
  if (!info.ok() || info->registers.count(kernel.entry) == 0) {
    return "registers unknown";
  }
  return absl::StrCat(info->registers.at(kernel.entry), " registers, ",
                      info->frame_bytes[kernel.entry], " bytes of stack");
}

// 1 (after naming the file) when the index could not be written.
int FinishIndex(const std::filesystem::path& out, std::ofstream& index) {
  index.flush();
  if (!index) {
    return Fail((out / "index.tsv").string(),
                absl::DataLossError("could not write the index"));
  }
  return 0;
}

// --sweep: the override tiles of a tile sweep file, each checked and
// compiled; 1 when any line or tile failed.
int CompileSweep(const std::filesystem::path& out, const GpuTarget& gpu,
                 const std::string& sweep_path) {
  std::ifstream sweep(sweep_path);
  if (!sweep) {
    return Fail(sweep_path, absl::NotFoundError("cannot read the sweep file"));
  }
  std::ofstream index(out / "index.tsv");
  std::set<std::string> seen;
  int count = 0;
  int failed = 0;
  int file_line = 0;
  std::string text;
  while (std::getline(sweep, text)) {
    ++file_line;
    const absl::string_view line =
        absl::StripAsciiWhitespace(absl::StripSuffix(text, "\r"));
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string> fields = absl::StrSplit(line, '|');
    const std::string where = absl::StrCat(sweep_path, ":", file_line);
    if (fields.size() != 4) {
      Fail(where, absl::InvalidArgumentError("expected SPEC|NxK|MS|OVERRIDE"));
      ++failed;
      continue;
    }
    if (fields[3].empty()) continue;  // the plan itself: nothing to check
    absl::StatusOr<QuantSpec> spec = ParseSpecText(fields[0]);
    absl::StatusOr<std::vector<LayerShape>> shapes =
        bench::ParseShapeList(fields[1]);
    absl::StatusOr<std::vector<bench::PlanOverride>> overrides =
        bench::ParsePlanOverrides(fields[3]);
    absl::Status parsed = !spec.ok()        ? spec.status()
                          : !shapes.ok()    ? shapes.status()
                          : !overrides.ok() ? overrides.status()
                                            : absl::OkStatus();
    if (!parsed.ok()) {
      Fail(where, parsed);
      ++failed;
      continue;
    }
    for (const LayerShape& shape : *shapes) {
      const KernelRequest request = GemmRequest(*spec, shape, gpu);
      const std::string layer = absl::StrCat(shape.n, "x", shape.k);
      for (const bench::PlanOverride& item : *overrides) {
        absl::StatusOr<bench::CompiledOverride> compiled =
            bench::CompilePlanOverride(request, item, 1, item.m_max);
        if (!compiled.ok()) {
          Fail(where, compiled.status());
          ++failed;
          continue;
        }
        const std::string key = absl::StrCat(fields[0], "\t", layer, "\t",
                                             compiled->entry.config.text);
        if (!seen.insert(key).second) continue;
        Record(out, compiled->kernel, key, count, index);
        std::printf("%d\tline %d\t%s\t%s\n", count, file_line, key.c_str(),
                    RegisterSummary(compiled->kernel).c_str());
        ++count;
      }
    }
  }
  if (FinishIndex(out, index) != 0) return 1;
  std::fprintf(stderr,
               "planned_cubins: %d override kernels into %s, %d failed\n",
               count, out.c_str(), failed);
  return failed == 0 ? 0 : 1;
}

// Calls visit(spec text, "NxK", request, entry) for every entry of every
// plan of --specs on `shapes`, in order; stops at the first nonzero return
// and returns it (1 after naming a spec or layer the planner refused).
using PlanEntryVisitor =
    std::function<int(absl::string_view spec_text, const std::string& layer,
                      const KernelRequest& request, const PlanEntry& entry)>;
int ForEachPlanEntry(const GpuTarget& gpu,
                     const std::vector<LayerShape>& shapes,
                     const PlanEntryVisitor& visit) {
  for (absl::string_view spec_text :
       absl::StrSplit(absl::GetFlag(FLAGS_specs), ';', absl::SkipEmpty())) {
    absl::StatusOr<QuantSpec> spec = ParseSpecText(std::string(spec_text));
    if (!spec.ok()) return Fail(std::string(spec_text), spec.status());
    for (const LayerShape& shape : shapes) {
      const KernelRequest request = GemmRequest(*spec, shape, gpu);
      const std::string layer = absl::StrCat(shape.n, "x", shape.k);
      absl::StatusOr<Plan> plan = PlanKernels(request);
      if (!plan.ok()) return Fail(layer, plan.status());
      for (const PlanEntry& entry : plan->entries) {
        if (const int rc = visit(spec_text, layer, request, entry); rc != 0) {
          return rc;
        }
      }
    }
  }
  return 0;
}

// --list: the plans' entries, one tab-separated line each.
int ListPlans(const GpuTarget& gpu, const std::vector<LayerShape>& shapes) {
  const int rc = ForEachPlanEntry(
      gpu, shapes,
      [](absl::string_view spec_text, const std::string& layer,
         const KernelRequest&, const PlanEntry& entry) {
        const LaunchParams& launch = entry.launch;
        std::printf(
            "%s\t%s\t%lld-%lld\t%s\tgrid=%lldx%lldx%lld/%lld\tsmem=%d\n",
            std::string(spec_text).c_str(), layer.c_str(),
            static_cast<long long>(entry.m_min),
            static_cast<long long>(entry.m_max), entry.config.text.c_str(),
            static_cast<long long>(launch.grid_x),
            static_cast<long long>(launch.grid_y),
            static_cast<long long>(launch.grid_z),
            static_cast<long long>(launch.m_per_block_x),
            launch.dynamic_shared_memory);
        return 0;
      });
  if (rc != 0) return rc;
  return std::fflush(stdout) == 0 ? 0 : 1;
}

// The planned kernels into `out`: one cubin per distinct (spec, layer,
// tile), with index.tsv.
int CompilePlanned(const std::filesystem::path& out, const GpuTarget& gpu,
                   const std::vector<LayerShape>& shapes) {
  std::ofstream index(out / "index.tsv");
  std::set<std::string> seen;
  int count = 0;
  const int rc = ForEachPlanEntry(
      gpu, shapes,
      [&](absl::string_view spec_text, const std::string& layer,
          const KernelRequest& request, const PlanEntry& entry) {
        const std::string key =
            absl::StrCat(spec_text, "\t", layer, "\t", entry.config.text);
        if (!seen.insert(key).second) return 0;
        absl::StatusOr<KernelSource> source =
            GenerateStub(request, entry.config);
        if (!source.ok()) return Fail(key, source.status());
        absl::StatusOr<CompiledKernel> kernel = CompileKernel(*source, gpu);
        if (!kernel.ok()) return Fail(key, kernel.status());
        Record(out, *kernel, key, count, index);
        std::printf("%d\t%s\n", count, key.c_str());
        ++count;
        return 0;
      });
  if (rc != 0) return rc;
  if (FinishIndex(out, index) != 0) return 1;
  std::fprintf(stderr, "planned_cubins: %d kernels into %s\n", count,
               out.c_str());
  return 0;
}

int Run() {
  absl::StatusOr<GpuTarget> gpu = ParseGpuArch(absl::GetFlag(FLAGS_arch));
  if (!gpu.ok()) return Fail("--arch", gpu.status());
  gpu->sm_count = absl::GetFlag(FLAGS_sms);
  gpu->max_shared_memory_per_block_optin = absl::GetFlag(FLAGS_smem_optin);
  const bool list = absl::GetFlag(FLAGS_list);
  const std::string sweep = absl::GetFlag(FLAGS_sweep);
  if (list && !sweep.empty()) {
    return Fail("--list", absl::InvalidArgumentError(
                              "lists plans; --sweep compiles a sweep's "
                              "tiles: give one of them"));
  }
  absl::StatusOr<std::vector<LayerShape>> shapes =
      bench::ParseShapeList(absl::GetFlag(FLAGS_shapes));
  if (!shapes.ok()) return Fail("--shapes", shapes.status());
  if (list) return ListPlans(*gpu, *shapes);
  const std::filesystem::path out = absl::GetFlag(FLAGS_out);
  if (out.empty()) {
    return Fail("--out", absl::InvalidArgumentError("a folder is required"));
  }
  std::error_code error;
  std::filesystem::create_directories(out, error);
  if (error) {
    return Fail(out.string(), absl::InternalError(error.message()));
  }
  if (!sweep.empty()) return CompileSweep(out, *gpu, sweep);
  return CompilePlanned(out, *gpu, *shapes);
}

}  // namespace
}  // namespace hummingd

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return hummingd::Run();
}
