// A Dequantize launch captured into a CUDA graph and replayed writes exactly
// what the direct launch wrote: the launch path neither allocates nor
// synchronizes, so capture works.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/gpu/dequantize.h"
#include "tests/gpu/dequant_inputs.h"
#include "tests/gpu/gpu_test_support.h"

namespace hummingd::gpu::testing {
namespace {

TEST(GraphCaptureTest, ReplayMatchesDirectLaunch) {
  HUMMINGD_REQUIRE_GPU();
  const char* spec =
      "weight=uint4,group=128,scale=fp16,zero=int,scale2=channel";
  const int64_t n = 256;
  const int64_t k = 1024;
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  absl::StatusOr<v1::KernelSet> set =
      ResolveDequant(spec, n, k, TestArch(TestDevice()));
  ASSERT_TRUE(set.ok()) << set.status();
  ArtifactCache cache;
  auto loaded = LoadedKernelSet::Load(*set, cache);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  DeviceDequantLayer layer;
  ASSERT_TRUE(layer.Init(spec, n, k, seed).ok());
  const CudaDriverApi& api = (*loaded)->driver();

  CUstream stream = nullptr;
  ASSERT_TRUE(CudaCheck(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                        "cuStreamCreate")
                  .ok());
  ASSERT_TRUE(Dequantize(**loaded, layer.buffers(), stream).ok());
  ASSERT_TRUE(CudaCheck(api.cuStreamSynchronize(stream), "sync").ok());
  absl::StatusOr<std::vector<uint16_t>> direct = layer.DownloadOutput();
  ASSERT_TRUE(direct.ok()) << direct.status();
  std::string first_few;
  EXPECT_EQ(layer.CountMismatches(*direct, &first_few), 0) << first_few;

  ASSERT_TRUE(layer.PoisonOutput().ok());
  CUgraph graph = nullptr;
  ASSERT_TRUE(CudaCheck(api.cuStreamBeginCapture(
                            stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                        "cuStreamBeginCapture")
                  .ok());
  const absl::Status captured = Dequantize(**loaded, layer.buffers(), stream);
  ASSERT_TRUE(
      CudaCheck(api.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture")
          .ok());
  ASSERT_TRUE(captured.ok()) << captured;
  CUgraphExec exec = nullptr;
  ASSERT_TRUE(
      CudaCheck(api.cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate")
          .ok());

  // Capturing launched nothing: the output still holds the poison.
  absl::StatusOr<std::vector<uint16_t>> before = layer.DownloadOutput();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ((*before)[0], 0xFFFF);

  for (int replay = 0; replay < 3; ++replay) {
    ASSERT_TRUE(layer.PoisonOutput().ok());
    ASSERT_TRUE(
        CudaCheck(api.cuGraphLaunch(exec, stream), "cuGraphLaunch").ok());
    ASSERT_TRUE(CudaCheck(api.cuStreamSynchronize(stream), "sync").ok());
    absl::StatusOr<std::vector<uint16_t>> replayed = layer.DownloadOutput();
    ASSERT_TRUE(replayed.ok()) << replayed.status();
    EXPECT_TRUE(*replayed == *direct) << "replay " << replay;
  }
  api.cuGraphExecDestroy(exec);
  api.cuGraphDestroy(graph);
  api.cuStreamDestroy(stream);
}

}  // namespace
}  // namespace hummingd::gpu::testing
