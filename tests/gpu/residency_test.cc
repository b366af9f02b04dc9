// The planner's residency model (Sm90ResidentBlocks and the per-SM budgets
// built on it, kernels/gemm_config.h) against the driver's own count, on an
// sm_90 GPU. The decode planner sizes tiles to run two, three or four blocks
// per SM; a model a few bytes off plans a tile "to the byte" that the driver
// then runs one block per SM fewer (decode-notes v128: the split-K
// epilogue's static bytes, 1.1-1.4x slower). For every kernel planned for
// the issue-5 decode specs and two zero-point specs on its six layers, at
// the plan's dynamic shared memory and at the two edges of each per-SM
// budget (the most dynamic bytes at which b blocks fit, and one more),
// cuOccupancyMaxActiveBlocksPerMultiprocessor must give what the model
// gives. Prints a table and, when $HUMMINGD_GPU_RESULTS_DIR is set, writes
// residency.md there.

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/kernel/decode_cases.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "kernels/cubin_info.h"
#include "kernels/gemm_config.h"
#include "tests/gpu/gemm_support.h"
#include "tests/gpu/gpu_test_support.h"

namespace hummingd::gpu::testing {
namespace {

// The table of record's specs, and integer zero points, whose 16-bit-scale
// tiles sit nearest the two-per-SM budget (decode-notes v128).
std::vector<std::string> ResidencySpecs() {
  std::vector<std::string> specs(std::begin(bench::kDecodeSpecs),
                                 std::end(bench::kDecodeSpecs));
  specs.push_back(
      "weight=uint4,group=128,scale=fp16,zero=int,act=fp16,out=fp16");
  specs.push_back(
      "weight=uint8,group=128,scale=fp16,zero=int,act=fp16,out=fp16");
  return specs;
}

// What the model and the driver are asked about one loaded kernel.
struct KernelFacts {
  // A context-independent artifact holds a CUkernel, which the launch and
  // occupancy calls take as it is but the function attribute calls do not.
  CUfunction function = nullptr;
  int registers = 0;
  int static_bytes = 0;  // the cubin's, beyond the reservation
  // The driver's CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, recorded beside the
  // cubin's figure: whether it counts the reservation the sm_90 section
  // starts with.
  int driver_static_bytes = 0;
};

absl::StatusOr<KernelFacts> FactsOf(const CudaDriverApi& api,
                                    const LoadedArtifact& artifact) {
  KernelFacts facts;
  facts.function = artifact.function;
  if (artifact.context_independent) {
    RETURN_IF_ERROR(CudaCheck(
        api.cuKernelGetFunction(&facts.function,
                                reinterpret_cast<CUkernel>(artifact.function)),
        "cuKernelGetFunction"));
  }
  const auto registers = artifact.info.registers.find(artifact.entry);
  if (registers == artifact.info.registers.end()) {
    return absl::NotFoundError("cubin records no register count for " +
                               artifact.entry);
  }
  facts.registers = registers->second;
  ASSIGN_OR_RETURN(facts.static_bytes,
                   KernelStaticSharedBytes(artifact.info, artifact.entry));
  RETURN_IF_ERROR(
      CudaCheck(api.cuFuncGetAttribute(&facts.driver_static_bytes,
                                       CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                       facts.function),
                "cuFuncGetAttribute(shared size)"));
  return facts;
}

absl::StatusOr<int> DriverResidentBlocks(const CudaDriverApi& api,
                                         CUfunction function, int threads,
                                         int dynamic_shared_bytes) {
  int blocks = 0;
  RETURN_IF_ERROR(CudaCheck(api.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                                &blocks, function, threads,
                                static_cast<size_t>(dynamic_shared_bytes)),
                            "cuOccupancyMaxActiveBlocksPerMultiprocessor"));
  return blocks;
}

TEST(ResidencyTest, ModelMatchesTheDriverForEveryPlannedDecodeKernel) {
  HUMMINGD_REQUIRE_GPU();
  const CudaDevice& device = TestDevice();
  if (device.sm != 90) {
    GTEST_SKIP() << "skipped: the model is sm_90's; this GPU is sm_"
                 << device.sm;
  }
  std::string markdown =
      "| spec | N x K | kernel | threads | registers | static bytes (cubin / "
      "driver) | dynamic bytes | model | driver |\n"
      "|---|---|---|---:|---:|---:|---:|---:|---:|\n";
  int kernels_checked = 0;
  int edges_checked = 0;
  for (const std::string& spec : ResidencySpecs()) {
    for (const auto& [n, k] : bench::kDecodeLayers) {
      absl::StatusOr<GemmLayerKernels> layer =
          ResolveGemm(spec, n, k, TestArch(device));
      ASSERT_TRUE(layer.ok())
          << spec << " " << n << "x" << k << ": " << layer.status();
      ArtifactCache cache;
      auto loaded = LoadedKernelSet::Load(layer->gemm, cache);
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      const CudaDriverApi& api = (*loaded)->driver();
      std::set<std::pair<const LoadedArtifact*, unsigned>> seen;
      for (const LoadedKernel& kernel : (*loaded)->kernels()) {
        const LoadedArtifact& artifact = *kernel.artifact;
        if (!seen.insert({&artifact, kernel.dynamic_shared_memory}).second) {
          continue;
        }
        const std::string label =
            absl::StrCat(spec, " ", n, "x", k, " M ", kernel.m_min, "-",
                         kernel.m_max, " ", kernel.dynamic_shared_memory);
        absl::StatusOr<KernelFacts> facts = FactsOf(api, artifact);
        ASSERT_TRUE(facts.ok()) << label << ": " << facts.status();
        const int threads = static_cast<int>(kernel.block_x);
        const int dynamic_bytes =
            static_cast<int>(kernel.dynamic_shared_memory);
        const int model = Sm90ResidentBlocks(
            threads, facts->registers, dynamic_bytes, facts->static_bytes);
        absl::StatusOr<int> driver =
            DriverResidentBlocks(api, facts->function, threads, dynamic_bytes);
        ASSERT_TRUE(driver.ok()) << label << ": " << driver.status();
        EXPECT_EQ(model, *driver)
            << label << ", " << facts->registers << " registers, "
            << facts->static_bytes << " static bytes";
        ++kernels_checked;
        absl::StrAppend(
            &markdown,
            absl::StrFormat("| `%s` | %d x %d | M %d-%d | %d | %d | %d / %d "
                            "| %d | %d | %d |\n",
                            spec, n, k, kernel.m_min, kernel.m_max, threads,
                            facts->registers, facts->static_bytes,
                            facts->driver_static_bytes, dynamic_bytes, model,
                            *driver));
      }
      // The budget edges, on each distinct function, up to what it may opt
      // into: the driver refuses more than the opt-in limit less its static
      // bytes, whatever it counts in them.
      std::set<const LoadedArtifact*> edged;
      for (const LoadedKernel& kernel : (*loaded)->kernels()) {
        const LoadedArtifact& artifact = *kernel.artifact;
        if (!edged.insert(&artifact).second) continue;
        absl::StatusOr<KernelFacts> facts = FactsOf(api, artifact);
        ASSERT_TRUE(facts.ok()) << artifact.entry << ": " << facts.status();
        const int threads = static_cast<int>(kernel.block_x);
        const int opt_in = device.max_shared_memory_per_block_optin -
                           facts->driver_static_bytes;
        const absl::Status raised = CudaCheck(
            api.cuFuncSetAttribute(
                facts->function,
                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, opt_in),
            "cuFuncSetAttribute(max dynamic shared memory)");
        EXPECT_TRUE(raised.ok()) << artifact.entry << ": " << raised;
        if (!raised.ok()) continue;
        for (int blocks = 1; blocks <= 4; ++blocks) {
          // The most dynamic bytes at which `blocks` fit, by the model and
          // this kernel's own static bytes, and one more.
          const int edge = Sm90BlockSharedBytes(blocks) -
                           kSm90ReservedSharedPerBlock - facts->static_bytes;
          for (const int bytes : {edge, edge + 1}) {
            if (bytes > opt_in) continue;
            absl::StatusOr<int> driver =
                DriverResidentBlocks(api, facts->function, threads, bytes);
            ASSERT_TRUE(driver.ok()) << driver.status();
            EXPECT_EQ(Sm90ResidentBlocks(threads, facts->registers, bytes,
                                         facts->static_bytes),
                      *driver)
                << spec << " " << n << "x" << k << " " << artifact.entry
                << " at " << bytes << " dynamic bytes, " << facts->registers
                << " registers, " << facts->static_bytes << " static bytes";
            ++edges_checked;
          }
        }
      }
    }
  }
  // Six specs on six layers plan at least six kernels each.
  EXPECT_GE(kernels_checked, 6 * 6 * 6);
  EXPECT_GE(edges_checked, 6 * 6 * 6);
  std::cout << "residency (model against the driver): " << kernels_checked
            << " planned kernels, " << edges_checked << " budget edges\n"
            << markdown;
  if (const char* dir = std::getenv("HUMMINGD_GPU_RESULTS_DIR")) {
    std::ofstream(absl::StrCat(dir, "/residency.md")) << markdown;
  }
}

}  // namespace
}  // namespace hummingd::gpu::testing
