// hummingd_gemm_bench: times the WNA16 GEMM as KERNELS.md prescribes. Per
// (spec, N×K, M): enough independent copies of the layer (repacked weights)
// that one pass over them moves more than 3× the L2, Forward calls rotating
// over the copies captured in one CUDA graph, the graph replayed
// --replays times, the median replay divided by its launches. Kernels come
// through the SDK in embedded mode (the daemon's own pipeline, in-process),
// weights are repacked on the GPU by QuantizedLinear. Prints a markdown
// table (and JSON) with the roofline max(bytes / copy bandwidth,
// 2·M·N·K / tensor rate) and, when --cublas_json is given, cuBLAS's time for
// the dense fp16/bf16 GEMM of the same shape.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/gpu/quantized_linear.h"
#include "hummingd/kernel_client.h"
#include "kernels/reference/dequant_reference.h"

ABSL_FLAG(std::string, specs,
          "weight=uint4,group=128,scale=fp16,act=fp16,out=fp16;"
          "weight=uint4,group=128,scale=bf16,act=bf16,out=bf16;"
          "weight=uint8,group=128,scale=fp16,act=fp16,out=fp16",
          "';'-separated specs (text form)");
ABSL_FLAG(std::string, shapes, "8192x8192,28672x8192,8192x28672",
          "comma-separated NxK");
ABSL_FLAG(std::string, ms, "1,16,64,256,1024,4096,8192", "token counts");
ABSL_FLAG(int, replays, 10, "graph replays (median taken)");
ABSL_FLAG(double, l2_bytes, 60e6, "L2 size the copies must exceed 3x");
ABSL_FLAG(double, copy_tbps, 4.18, "measured device-to-device copy TB/s");
ABSL_FLAG(double, tensor_tflops, 800.0, "measured dense fp16 TFLOP/s");
ABSL_FLAG(std::string, cache_dir, "/tmp/hummingd-gemm-bench-cache",
          "embedded kernel cache");
ABSL_FLAG(std::string, cublas_json, "",
          "cuBLAS times from cublas_reference.py (optional)");
ABSL_FLAG(std::string, markdown, "", "write the table here too");

namespace {

using namespace hummingd;

#define BENCH_CHECK(expr)                                              \
  do {                                                                 \
    absl::Status bench_status_ = (expr);                               \
    if (!bench_status_.ok()) {                                         \
      std::fprintf(stderr, "gemm_bench: %s: %s\n", #expr,              \
                   std::string(bench_status_.message()).c_str());      \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)

template <typename T>
T Unwrap(absl::StatusOr<T> value, const char* what) {
  if (!value.ok()) {
    std::fprintf(stderr, "gemm_bench: %s: %s\n", what,
                 std::string(value.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(value);
}

// Device allocation owned for the whole run.
CUdeviceptr Upload(const gpu::CudaDriverApi& api, const void* data,
                   size_t bytes) {
  CUdeviceptr pointer = 0;
  if (bytes == 0) return 0;
  BENCH_CHECK(gpu::CudaCheck(api.cuMemAlloc(&pointer, bytes), "cuMemAlloc"));
  if (data != nullptr) {
    BENCH_CHECK(
        gpu::CudaCheck(api.cuMemcpyHtoD(pointer, data, bytes), "cuMemcpyHtoD"));
  } else {
    BENCH_CHECK(gpu::CudaCheck(api.cuMemsetD8(pointer, 0x3C, bytes),
                               "cuMemsetD8"));  // 0x3C3C: ~1.06 in fp16
  }
  return pointer;
}

// cuBLAS reference: "N K M dtype" -> microseconds.
std::map<std::string, double> LoadCublas(const std::string& path) {
  std::map<std::string, double> times;
  if (path.empty()) return times;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    double us = 0;
    if (fields.size() == 5 && absl::SimpleAtod(fields[4], &us)) {
      times[absl::StrCat(fields[0], " ", fields[1], " ", fields[2], " ",
                         fields[3])] = us;
    }
  }
  return times;
}

struct Row {
  std::string spec;
  int64_t n, k, m;
  double us, roofline_us, cublas_us;
};

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const gpu::CudaDriverApi& api = *Unwrap(gpu::CudaDriver(), "driver");
  const gpu::CudaDevice device = Unwrap(gpu::UseDevice(0), "device");
  const std::string arch =
      device.sm == 90 ? "sm_90a" : absl::StrCat("sm_", device.sm);

  client::ClientOptions options;
  options.mode = client::ResolveMode::kEmbedded;
  options.embedded_cache_dir = absl::GetFlag(FLAGS_cache_dir);
  auto kernel_client =
      Unwrap(client::KernelClient::Create(options), "kernel client");
  gpu::ArtifactCache artifacts;
  const auto cublas = LoadCublas(absl::GetFlag(FLAGS_cublas_json));

  std::vector<int64_t> ms;
  for (absl::string_view text : absl::StrSplit(absl::GetFlag(FLAGS_ms), ',')) {
    int64_t m = 0;
    if (absl::SimpleAtoi(text, &m)) ms.push_back(m);
  }
  const int64_t max_m = *std::max_element(ms.begin(), ms.end());
  CUstream stream = nullptr;
  BENCH_CHECK(gpu::CudaCheck(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                             "cuStreamCreate"));
  CUevent start = nullptr, stop = nullptr;
  BENCH_CHECK(gpu::CudaCheck(api.cuEventCreate(&start, 0), "cuEventCreate"));
  BENCH_CHECK(gpu::CudaCheck(api.cuEventCreate(&stop, 0), "cuEventCreate"));

  std::vector<Row> rows;
  for (absl::string_view spec_text :
       absl::StrSplit(absl::GetFlag(FLAGS_specs), ';', absl::SkipEmpty())) {
    const QuantSpec spec =
        Unwrap(ParseSpecText(std::string(spec_text)), "spec");
    for (absl::string_view shape_text :
         absl::StrSplit(absl::GetFlag(FLAGS_shapes), ',')) {
      std::vector<std::string> nk = absl::StrSplit(shape_text, 'x');
      LayerShape shape;
      if (nk.size() != 2 || !absl::SimpleAtoi(nk[0], &shape.n) ||
          !absl::SimpleAtoi(nk[1], &shape.k)) {
        std::fprintf(stderr, "gemm_bench: bad shape %s\n",
                     std::string(shape_text).c_str());
        return 2;
      }
      v1::KernelRequest request;
      request.set_family(v1::KERNEL_FAMILY_GEMM);
      request.mutable_spec()->set_text(std::string(spec_text));
      request.mutable_shape()->set_n(shape.n);
      request.mutable_shape()->set_k(shape.k);
      request.mutable_gpu()->set_arch(arch);
      request.mutable_gpu()->set_sm_count(device.sm_count);
      auto set = Unwrap(kernel_client->Resolve(request), "resolve");
      std::shared_ptr<const gpu::LoadedKernelSet> loaded =
          Unwrap(gpu::LoadedKernelSet::Load(*set, artifacts), "load");

      // Checkpoint tensors (random, valid), shared by every copy; each copy
      // repacks them into its own weights.
      const DequantInputs inputs = MakeRandomDequantInputs(spec, shape, 1234);
      const DequantLayout layout =
          Unwrap(DequantBufferLayout(spec, shape), "layout");
      gpu::CheckpointWeights checkpoint;
      checkpoint.weights = Upload(api, inputs.weights.data(),
                                  inputs.weights.size() * sizeof(uint32_t));
      checkpoint.scales =
          Upload(api, inputs.scales.data(), inputs.scales.size());
      checkpoint.zero_points =
          Upload(api, inputs.zero_points.data(), inputs.zero_points.size());
      checkpoint.secondary_scale =
          Upload(api, inputs.secondary_scales.data(),
                 inputs.secondary_scales.size() * sizeof(float));
      const double weight_bytes =
          static_cast<double>(layout.weight_words) * 4.0;
      const int copies = std::max<int>(
          2, static_cast<int>(std::ceil(3 * absl::GetFlag(FLAGS_l2_bytes) /
                                        weight_bytes)) +
                 1);
      std::vector<std::unique_ptr<gpu::QuantizedLinear>> layers;
      for (int c = 0; c < copies; ++c) {
        layers.push_back(Unwrap(
            gpu::QuantizedLinear::Create(loaded, checkpoint, max_m, stream),
            "layer"));
      }
      BENCH_CHECK(gpu::CudaCheck(api.cuStreamSynchronize(stream), "repack"));
      BENCH_CHECK(gpu::CudaCheck(api.cuMemFree(checkpoint.weights), "free"));
      const CUdeviceptr x = Upload(api, nullptr, max_m * shape.k * 2);
      const CUdeviceptr y = Upload(api, nullptr, max_m * shape.n * 2);

      for (const int64_t m : ms) {
        // At least 20 launches per replay, rotating over the copies.
        const int launches = std::max(20, copies);
        CUgraph graph = nullptr;
        CUgraphExec exec = nullptr;
        BENCH_CHECK(gpu::CudaCheck(
            api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            "capture"));
        absl::Status captured;
        for (int i = 0; i < launches && captured.ok(); ++i) {
          captured = layers[i % copies]->Forward(x, y, m, stream);
        }
        BENCH_CHECK(gpu::CudaCheck(api.cuStreamEndCapture(stream, &graph),
                                   "end capture"));
        BENCH_CHECK(captured);
        BENCH_CHECK(gpu::CudaCheck(api.cuGraphInstantiate(&exec, graph, 0),
                                   "instantiate"));
        BENCH_CHECK(gpu::CudaCheck(api.cuGraphLaunch(exec, stream), "warm"));
        std::vector<double> per_launch_us;
        for (int r = 0; r < absl::GetFlag(FLAGS_replays); ++r) {
          BENCH_CHECK(gpu::CudaCheck(api.cuEventRecord(start, stream), "ev"));
          BENCH_CHECK(gpu::CudaCheck(api.cuGraphLaunch(exec, stream), "replay"));
          BENCH_CHECK(gpu::CudaCheck(api.cuEventRecord(stop, stream), "ev"));
          BENCH_CHECK(gpu::CudaCheck(api.cuEventSynchronize(stop), "sync"));
          float ms_elapsed = 0;
          BENCH_CHECK(gpu::CudaCheck(
              api.cuEventElapsedTime(&ms_elapsed, start, stop), "elapsed"));
          per_launch_us.push_back(1000.0 * ms_elapsed / launches);
        }
        api.cuGraphExecDestroy(exec);
        api.cuGraphDestroy(graph);
        std::sort(per_launch_us.begin(), per_launch_us.end());
        const double median = per_launch_us[per_launch_us.size() / 2];
        const double bytes = weight_bytes +
                             static_cast<double>(inputs.scales.size()) +
                             static_cast<double>(inputs.zero_points.size()) +
                             2.0 * m * shape.k + 2.0 * m * shape.n;
        const double roofline_us = std::max(
            bytes / (absl::GetFlag(FLAGS_copy_tbps) * 1e12) * 1e6,
            2.0 * m * shape.n * shape.k /
                (absl::GetFlag(FLAGS_tensor_tflops) * 1e12) * 1e6);
        const std::string dtype =
            spec.activation_type == DataType::kBf16 ? "bf16" : "fp16";
        auto it = cublas.find(absl::StrCat(shape.n, " ", shape.k, " ", m, " ",
                                           dtype));
        rows.push_back(Row{std::string(spec_text), shape.n, shape.k, m, median,
                           roofline_us,
                           it == cublas.end() ? 0.0 : it->second});
        std::fprintf(stderr, "%s %lldx%lld M=%lld: %.1f us\n",
                     std::string(spec_text).c_str(),
                     static_cast<long long>(shape.n),
                     static_cast<long long>(shape.k),
                     static_cast<long long>(m), median);
      }
      layers.clear();
      api.cuMemFree(x);
      api.cuMemFree(y);
      api.cuMemFree(checkpoint.scales);
      if (checkpoint.zero_points) api.cuMemFree(checkpoint.zero_points);
      if (checkpoint.secondary_scale) api.cuMemFree(checkpoint.secondary_scale);
    }
  }

  std::ostringstream table;
  table << "| spec | N×K | M | hummingd µs | roofline µs | of roofline | "
           "cuBLAS dense µs | vs cuBLAS |\n|---|---|---:|---:|---:|---:|---:|---:|\n";
  for (const Row& row : rows) {
    table << absl::StrFormat(
        "| `%s` | %d×%d | %d | %.1f | %.1f | %.0f%% | %s | %s |\n", row.spec,
        row.n, row.k, row.m, row.us, row.roofline_us,
        100.0 * row.roofline_us / row.us,
        row.cublas_us > 0 ? absl::StrFormat("%.1f", row.cublas_us) : "-",
        row.cublas_us > 0 ? absl::StrFormat("%.2f×", row.cublas_us / row.us)
                          : "-");
  }
  std::printf("%s", table.str().c_str());
  if (!absl::GetFlag(FLAGS_markdown).empty()) {
    std::ofstream(absl::GetFlag(FLAGS_markdown)) << table.str();
  }
  return 0;
}
