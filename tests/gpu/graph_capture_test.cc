// Launches captured into a CUDA graph and replayed compute what they compute
// directly: a Dequantize launch writes exactly what the direct launch wrote,
// and QuantizedLinear::Forward, captured in the global mode (which fails
// the capture on any unsafe call, a synchronization or an allocation, from
// any thread), matches the fp64 reference on every replay.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/gpu/dequantize.h"
#include "hummingd/gpu/quantized_linear.h"
#include "tests/gpu/dequant_inputs.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/linear_layer.h"

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

// Forwards for two token counts captured into one graph on an explicit
// stream and replayed: nothing runs at capture, and each replay writes what
// the reference says (split-K kernels leave their counters zeroed for the
// next replay).
TEST(GraphCaptureTest, LayerForwardReplayMatchesTheReference) {
  HUMMINGD_REQUIRE_GPU();
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  ArtifactCache cache;
  absl::StatusOr<LinearLayerSetup> setup =
      SetUpLinearLayer(TestArch(TestDevice()), cache, seed);
  ASSERT_TRUE(setup.ok()) << setup.status();
  const std::shared_ptr<const LoadedKernelSet>& shared = setup->set;
  const HostLinearLayer* host = &setup->host;
  const DeviceCheckpoint& checkpoint = *setup->checkpoint;
  const CudaDriverApi& api = shared->driver();

  CUstream stream = nullptr;
  ASSERT_TRUE(CudaCheck(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                        "cuStreamCreate")
                  .ok());
  const int64_t ms[] = {1, 16};  // up to max_m
  absl::StatusOr<std::unique_ptr<QuantizedLinear>> layer =
      QuantizedLinear::Create(shared, checkpoint.Weights(), /*max_m=*/16,
                              stream);
  ASSERT_TRUE(layer.ok()) << layer.status();
  ASSERT_TRUE(CudaCheck(api.cuStreamSynchronize(stream), "repack").ok());

  std::vector<Activations> xs;
  std::vector<std::unique_ptr<DeviceBuffer>> x_devices, y_devices;
  for (int64_t m : ms) {
    xs.push_back(MakeActivations(*host, m, seed));
    x_devices.push_back(std::make_unique<DeviceBuffer>());
    ASSERT_TRUE(x_devices.back()
                    ->Allocate(xs.back().bits.size() * 2, xs.back().bits.data())
                    .ok());
    y_devices.push_back(std::make_unique<DeviceBuffer>());
    ASSERT_TRUE(y_devices.back()
                    ->Allocate(static_cast<size_t>(m * kLinearLayerN * 2))
                    .ok());
    ASSERT_TRUE(y_devices.back()->Fill(0xFF).ok());  // NaN in fp16
  }

  CUgraph graph = nullptr;
  ASSERT_TRUE(
      CudaCheck(api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL),
                "cuStreamBeginCapture")
          .ok());
  absl::Status captured = absl::OkStatus();
  for (size_t i = 0; i < xs.size() && captured.ok(); ++i) {
    captured = (*layer)->Forward(x_devices[i]->get(), y_devices[i]->get(),
                                 xs[i].m, stream);
  }
  // Ended whatever happened, so that the stream is usable again.
  const absl::Status ended =
      CudaCheck(api.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  ASSERT_TRUE(captured.ok()) << captured;
  ASSERT_TRUE(ended.ok()) << ended;
  CUgraphExec exec = nullptr;
  ASSERT_TRUE(
      CudaCheck(api.cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate")
          .ok());

  // Capturing launched nothing: the outputs still hold the poison.
  for (size_t i = 0; i < xs.size(); ++i) {
    uint16_t first = 0;
    ASSERT_TRUE(y_devices[i]->Download(&first, sizeof(first)).ok());
    EXPECT_EQ(first, 0xFFFF) << "M = " << xs[i].m;
  }

  for (int replay = 0; replay < 3; ++replay) {
    for (auto& y : y_devices) ASSERT_TRUE(y->Fill(0xFF).ok());
    ASSERT_TRUE(
        CudaCheck(api.cuGraphLaunch(exec, stream), "cuGraphLaunch").ok());
    ASSERT_TRUE(CudaCheck(api.cuStreamSynchronize(stream), "sync").ok());
    for (size_t i = 0; i < xs.size(); ++i) {
      std::vector<uint16_t> y_bits(static_cast<size_t>(xs[i].m) *
                                   kLinearLayerN);
      ASSERT_TRUE(
          y_devices[i]->Download(y_bits.data(), y_bits.size() * 2).ok());
      EXPECT_LE(OutputError(*host, xs[i], y_bits), kLinearLayerBound)
          << "replay " << replay << ", M = " << xs[i].m;
    }
  }
  api.cuGraphExecDestroy(exec);
  api.cuGraphDestroy(graph);
  layer->reset();  // frees synchronize: not before the stream is done
  api.cuStreamDestroy(stream);
}

}  // namespace
}  // namespace hummingd::gpu::testing
