// hummingd_planned_cubins: compiles every kernel the planner emits for a set
// of specs and layers (default: the decode benchmark's) to cubins, without a
// GPU, so that two trees' kernels can be compared instruction by instruction
// (scripts/sass_compare.sh). A device-code change that claims to leave some
// kernels unchanged, or to shorten their k-loops, is checked this way before
// it takes device time (bench/decode-notes.md).
//
//   hummingd_planned_cubins --out DIR [--arch sm_90a] [--sms 132]
//       [--specs 'a;b'] [--shapes NxK,...]
//
// DIR/<i>.cubin, one per distinct (spec, layer, tile), and DIR/index.tsv:
// i, spec, NxK, tile text, cubin bytes.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/kernel/decode_cases.h"
#include "kernels/codegen.h"
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

namespace hummingd {
namespace {

int Fail(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "planned_cubins: %s: %s\n", what.c_str(),
               status.ToString().c_str());
  return 1;
}

int Run() {
  const std::filesystem::path out = absl::GetFlag(FLAGS_out);
  if (out.empty()) {
    return Fail("--out", absl::InvalidArgumentError("a folder is required"));
  }
  std::error_code error;
  std::filesystem::create_directories(out, error);
  if (error) {
    return Fail(out.string(), absl::InternalError(error.message()));
  }
  absl::StatusOr<GpuTarget> gpu = ParseGpuArch(absl::GetFlag(FLAGS_arch));
  if (!gpu.ok()) return Fail("--arch", gpu.status());
  gpu->sm_count = absl::GetFlag(FLAGS_sms);
  gpu->max_shared_memory_per_block_optin = absl::GetFlag(FLAGS_smem_optin);
  absl::StatusOr<std::vector<LayerShape>> shapes =
      bench::ParseShapeList(absl::GetFlag(FLAGS_shapes));
  if (!shapes.ok()) return Fail("--shapes", shapes.status());

  std::ofstream index(out / "index.tsv");
  std::set<std::string> seen;
  int count = 0;
  for (absl::string_view spec_text :
       absl::StrSplit(absl::GetFlag(FLAGS_specs), ';', absl::SkipEmpty())) {
    absl::StatusOr<QuantSpec> spec = ParseSpecText(std::string(spec_text));
    if (!spec.ok()) return Fail(std::string(spec_text), spec.status());
    for (const LayerShape& shape : *shapes) {
      KernelRequest request;
      request.family = KernelFamily::kGemm;
      request.spec = *spec;
      request.shape = shape;
      request.gpu = *gpu;
      request.launch_abi = kCurrentLaunchAbi;
      const std::string layer = absl::StrCat(shape.n, "x", shape.k);
      absl::StatusOr<Plan> plan = PlanKernels(request);
      if (!plan.ok()) return Fail(layer, plan.status());
      for (const PlanEntry& entry : plan->entries) {
        const std::string key =
            absl::StrCat(spec_text, "\t", layer, "\t", entry.config.text);
        if (!seen.insert(key).second) continue;
        absl::StatusOr<KernelSource> source =
            GenerateStub(request, entry.config);
        if (!source.ok()) return Fail(key, source.status());
        absl::StatusOr<CompiledKernel> kernel = CompileKernel(*source, *gpu);
        if (!kernel.ok()) return Fail(key, kernel.status());
        std::ofstream(out / absl::StrCat(count, ".cubin"), std::ios::binary)
            << kernel->cubin;
        index << count << "\t" << key << "\t" << kernel->cubin.size() << "\n";
        std::printf("%d\t%s\n", count, key.c_str());
        ++count;
      }
    }
  }
  index.flush();
  if (!index) {
    return Fail((out / "index.tsv").string(),
                absl::DataLossError("could not write the index"));
  }
  std::fprintf(stderr, "planned_cubins: %d kernels into %s\n", count,
               out.c_str());
  return 0;
}

}  // namespace
}  // namespace hummingd

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return hummingd::Run();
}
