// The planner's residency model (Sm90ResidentBlocks and the per-SM budgets
// built on it, kernels/gemm_config.h) against the driver's own count, on an
// sm_90 GPU. The decode planner sizes tiles to run two, three or four blocks
// per SM; a model a few bytes off plans a tile "to the byte" that the driver
// then runs one block per SM fewer (decode-notes v128: the split-K
// epilogue's static bytes, 1.1-1.4x slower). For every kernel planned for
// the issue-5 decode specs and two zero-point specs on its six layers, at
// the plan's dynamic shared memory and at the two edges of each budget
// (Sm90SharedBytesForAtLeast(b) and one byte more),
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
      "| spec | N x K | kernel | threads | registers | static bytes (driver) "
      "| dynamic bytes | model | driver |\n"
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
        const auto registers = artifact.info.registers.find(artifact.entry);
        ASSERT_NE(registers, artifact.info.registers.end()) << label;
        int static_bytes = -1;
        ASSERT_TRUE(
            CudaCheck(api.cuFuncGetAttribute(
                          &static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                          artifact.function),
                      "cuFuncGetAttribute(shared size)")
                .ok());
        // The budgets leave out exactly this much beside the 1 KB the
        // driver reserves.
        EXPECT_LE(static_bytes, kGemmStaticSharedBytes) << label;
        const int threads = static_cast<int>(kernel.block_x);
        const int model =
            Sm90ResidentBlocks(threads, registers->second,
                               static_cast<int>(kernel.dynamic_shared_memory));
        absl::StatusOr<int> driver = DriverResidentBlocks(
            api, artifact.function, threads,
            static_cast<int>(kernel.dynamic_shared_memory));
        ASSERT_TRUE(driver.ok()) << label << ": " << driver.status();
        EXPECT_EQ(model, *driver) << label;
        ++kernels_checked;
        absl::StrAppend(
            &markdown,
            absl::StrFormat("| `%s` | %d x %d | M %d-%d | %d | %d | %d | %d "
                            "| %d | %d |\n",
                            spec, n, k, kernel.m_min, kernel.m_max, threads,
                            registers->second, static_bytes,
                            kernel.dynamic_shared_memory, model, *driver));
      }
      // The budget edges, on each distinct function: the query may ask for
      // up to the opt-in limit, as a plan of that tile could.
      std::set<const LoadedArtifact*> edged;
      for (const LoadedKernel& kernel : (*loaded)->kernels()) {
        const LoadedArtifact& artifact = *kernel.artifact;
        if (!edged.insert(&artifact).second) continue;
        const int registers = artifact.info.registers.at(artifact.entry);
        const int threads = static_cast<int>(kernel.block_x);
        ASSERT_TRUE(
            CudaCheck(api.cuFuncSetAttribute(
                          artifact.function,
                          CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                          Sm90SharedBytesForAtLeast(1)),
                      "cuFuncSetAttribute(max dynamic shared memory)")
                .ok());
        for (int blocks = 1; blocks <= 4; ++blocks) {
          for (const int bytes : {Sm90SharedBytesForAtLeast(blocks),
                                  Sm90SharedBytesForAtLeast(blocks) + 1}) {
            if (blocks == 1 && bytes > Sm90SharedBytesForAtLeast(1)) continue;
            absl::StatusOr<int> driver =
                DriverResidentBlocks(api, artifact.function, threads, bytes);
            ASSERT_TRUE(driver.ok()) << driver.status();
            EXPECT_EQ(Sm90ResidentBlocks(threads, registers, bytes), *driver)
                << spec << " " << n << "x" << k << " " << artifact.entry
                << " at " << bytes << " dynamic bytes, " << registers
                << " registers";
            ++edges_checked;
          }
        }
      }
    }
  }
  // Six specs on six layers plan at least six kernels each.
  EXPECT_GE(kernels_checked, 6 * 6 * 6);
  EXPECT_GE(edges_checked, 6 * 6 * 7);
  std::cout << "residency (model against the driver): " << kernels_checked
            << " planned kernels, " << edges_checked << " budget edges\n"
            << markdown;
  if (const char* dir = std::getenv("HUMMINGD_GPU_RESULTS_DIR")) {
    std::ofstream(absl::StrCat(dir, "/residency.md")) << markdown;
  }
}

}  // namespace
}  // namespace hummingd::gpu::testing
