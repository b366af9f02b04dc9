// hummingd_gemm_bench: times the WNA16 GEMM as KERNELS.md prescribes. Per
// (spec, N×K, M): enough independent copies of the layer (repacked weights)
// that one pass over them moves more than 3× the L2, Forward calls rotating
// over the copies captured in one CUDA graph, the graph replayed
// --replays times, the median replay divided by its launches. Kernels come
// through the SDK in embedded mode (the daemon's own pipeline, in-process),
// weights are repacked on the GPU by QuantizedLinear.
//
// Every timed case is also checked for numerics (a time is worthless if the
// output is wrong): one more Forward into a NaN-poisoned output, sampled
// columns of it against an fp64 reference on the exactly dequantized weights
// (gemm_bench_check.h), and judged against its speed target. Prints a
// markdown table with the roofline max(bytes / copy bandwidth,
// 2·M·N·K / tensor rate), the target, the relative error and, when
// --cublas_json is given, cuBLAS's time for the dense fp16/bf16 GEMM of the
// same shape; --json writes the rows as JSON. Exits 1 when any numerics
// check fails (after writing everything).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/kernel/decode_cases.h"
#include "bench/kernel/gemm_bench_check.h"
#include "bench/kernel/gemm_bench_report.h"
#include "bench/kernel/gpu_ceilings.h"
#include "bench/kernel/plan_override.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/gpu/quantized_linear.h"
#include "hummingd/kernel_client.h"
#include "kernels/launch_abi.h"
#include "kernels/reference/dequant_reference.h"
#include "server/proto_convert.h"

ABSL_FLAG(std::string, specs, hummingd::bench::DecodeSpecsText(),
          "';'-separated specs (text form)");
ABSL_FLAG(std::string, shapes, hummingd::bench::DecodeLayersText(),
          "comma-separated NxK");
ABSL_FLAG(std::string, ms, "1,2,4,8,16,32,64,256,1024,4096,8192",
          "token counts");
ABSL_FLAG(int, replays, 10, "graph replays (median taken)");
ABSL_FLAG(double, l2_bytes, 0,
          "L2 size the copies must exceed 3x (0: KERNELS.md's 60 MB, or the "
          "device's L2 where it exceeds the H200's 60 MiB)");
ABSL_FLAG(
    double, copy_tbps, 0,
    "the roofline's device-to-device copy TB/s (0: the GPU's committed "
    "ceiling, else this run's measured copy; bench/kernel/gpu_ceilings.h)");
ABSL_FLAG(double, tensor_tflops, 0,
          "the roofline's dense fp16 TFLOP/s (0: the GPU's committed ceiling, "
          "else the --cublas_json file's measured rate, else that of a "
          "committed GPU of the same compute capability)");
ABSL_FLAG(std::string, cache_dir, "/tmp/hummingd-gemm-bench-cache",
          "embedded kernel cache");
ABSL_FLAG(std::string, cublas_json, "",
          "cuBLAS times from cublas_reference.py (optional)");
ABSL_FLAG(std::string, markdown, "", "write the table here too");
ABSL_FLAG(std::string, json, "", "write the rows here as JSON");
ABSL_FLAG(std::string, wgmma_copy, "",
          "bulk or cp_async: time every wgmma range of the plan with that "
          "weight copy path (its tile and split-K otherwise unchanged); "
          "not with --override");
ABSL_FLAG(std::string, override, "",
          "tuning: replace planned M ranges, 'M_MAX:TILE_TEXT:SPLITS;...' "
          "(bench/kernel/plan_override.h); rows then time that config");
ABSL_FLAG(int, plan_sm_count, 0,
          "plan as if the GPU had this many SMs (0: the device's own); a "
          "tuning knob for comparing split-K choices, not for results");
ABSL_FLAG(uint64_t, seed, 1234,
          "seed of the weights, activations and bias (printed with the "
          "results, so a failing case can be reproduced)");

namespace {

using namespace hummingd;

#define BENCH_CHECK(expr)                                         \
  do {                                                            \
    absl::Status bench_status_ = (expr);                          \
    if (!bench_status_.ok()) {                                    \
      std::fprintf(stderr, "gemm_bench: %s: %s\n", #expr,         \
                   std::string(bench_status_.message()).c_str()); \
      std::exit(1);                                               \
    }                                                             \
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

// Device allocation owned by the caller; 0 for an empty buffer.
CUdeviceptr Allocate(const gpu::CudaDriverApi& api, size_t bytes) {
  CUdeviceptr pointer = 0;
  if (bytes == 0) return 0;
  BENCH_CHECK(gpu::CudaCheck(api.cuMemAlloc(&pointer, bytes), "cuMemAlloc"));
  return pointer;
}

CUdeviceptr Upload(const gpu::CudaDriverApi& api, const void* data,
                   size_t bytes) {
  const CUdeviceptr pointer = Allocate(api, bytes);
  if (pointer != 0) {
    BENCH_CHECK(
        gpu::CudaCheck(api.cuMemcpyHtoD(pointer, data, bytes), "cuMemcpyHtoD"));
  }
  return pointer;
}

void Free(const gpu::CudaDriverApi& api, CUdeviceptr pointer) {
  if (pointer != 0) api.cuMemFree(pointer);
}

// What cublas_reference.py measured: "N K M dtype" -> microseconds, and the
// dense fp16 tensor rate from its "# tensor_tflops X" line.
struct CublasReference {
  std::map<std::string, double> times;
  std::optional<double> tensor_tflops;
};

CublasReference LoadCublas(const std::string& path) {
  CublasReference reference;
  if (path.empty()) return reference;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    std::vector<std::string> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    double value = 0;
    if (fields.size() >= 3 && fields[0] == "#" &&
        fields[1] == "tensor_tflops" && absl::SimpleAtod(fields[2], &value)) {
      reference.tensor_tflops = value;
    } else if (fields.size() == 5 && absl::SimpleAtod(fields[4], &value)) {
      reference.times[absl::StrCat(fields[0], " ", fields[1], " ", fields[2],
                                   " ", fields[3])] = value;
    }
  }
  return reference;
}

// What stays fixed over a run: the device, the stream and its timing events.
struct Device {
  const gpu::CudaDriverApi* api = nullptr;
  CUstream stream = nullptr;
  CUevent start = nullptr;
  CUevent stop = nullptr;
};

// The median milliseconds of `count` event-timed runs of `issue`, which
// enqueues its work on the device's stream.
template <class Issue>
double MedianEventMs(const Device& device, int count, Issue issue) {
  const gpu::CudaDriverApi& api = *device.api;
  std::vector<double> ms;
  for (int r = 0; r < count; ++r) {
    BENCH_CHECK(
        gpu::CudaCheck(api.cuEventRecord(device.start, device.stream), "ev"));
    issue();
    BENCH_CHECK(
        gpu::CudaCheck(api.cuEventRecord(device.stop, device.stream), "ev"));
    BENCH_CHECK(gpu::CudaCheck(api.cuEventSynchronize(device.stop), "sync"));
    float ms_elapsed = 0;
    BENCH_CHECK(gpu::CudaCheck(
        api.cuEventElapsedTime(&ms_elapsed, device.start, device.stop),
        "elapsed"));
    ms.push_back(ms_elapsed);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Median µs per Forward of `launches` calls rotating over `layers`, replayed
// as one CUDA graph.
double TimeForward(
    const Device& device,
    const std::vector<std::unique_ptr<gpu::QuantizedLinear>>& layers,
    CUdeviceptr x, CUdeviceptr y, int64_t m) {
  const gpu::CudaDriverApi& api = *device.api;
  const int copies = static_cast<int>(layers.size());
  // At least 20 launches per replay, rotating over the copies.
  const int launches = std::max(20, copies);
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  BENCH_CHECK(
      gpu::CudaCheck(api.cuStreamBeginCapture(
                         device.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                     "capture"));
  absl::Status captured;
  for (int i = 0; i < launches && captured.ok(); ++i) {
    captured = layers[i % copies]->Forward(x, y, m, device.stream);
  }
  BENCH_CHECK(gpu::CudaCheck(api.cuStreamEndCapture(device.stream, &graph),
                             "end capture"));
  BENCH_CHECK(captured);
  BENCH_CHECK(
      gpu::CudaCheck(api.cuGraphInstantiate(&exec, graph, 0), "instantiate"));
  BENCH_CHECK(gpu::CudaCheck(api.cuGraphLaunch(exec, device.stream), "warm"));
  const double replay_ms =
      MedianEventMs(device, absl::GetFlag(FLAGS_replays), [&] {
        BENCH_CHECK(
            gpu::CudaCheck(api.cuGraphLaunch(exec, device.stream), "replay"));
      });
  api.cuGraphExecDestroy(exec);
  api.cuGraphDestroy(graph);
  return 1000.0 * replay_ms / launches;
}

// KERNELS.md's copy ceiling, measured: a 1 GiB device-to-device copy of
// non-zero bytes, counting bytes read plus bytes written, the median of 10
// event-timed copies after one warm-up.
double MeasureCopyTbps(const Device& device) {
  const gpu::CudaDriverApi& api = *device.api;
  constexpr size_t kBytes = size_t{1} << 30;
  const CUdeviceptr from = Allocate(api, kBytes);
  const CUdeviceptr to = Allocate(api, kBytes);
  BENCH_CHECK(gpu::CudaCheck(api.cuMemsetD8(from, 0xA5, kBytes), "fill"));
  BENCH_CHECK(gpu::CudaCheck(api.cuCtxSynchronize(), "fill sync"));
  auto copy = [&] {
    BENCH_CHECK(gpu::CudaCheck(
        api.cuMemcpyDtoDAsync(to, from, kBytes, device.stream), "copy"));
  };
  copy();  // warm-up
  const double ms = MedianEventMs(device, 10, copy);
  Free(api, from);
  Free(api, to);
  return 2.0 * kBytes / (ms * 1e-3) / 1e12;
}

// One Forward of `layer` into a NaN-poisoned `y` (so an element the kernel
// never writes cannot pass), the sampled rows copied back and judged.
bench::NumericsResult CheckForward(const Device& device,
                                   const gpu::QuantizedLinear& layer,
                                   const bench::NumericsReference& reference,
                                   const std::vector<uint16_t>& x_bits,
                                   CUdeviceptr x, CUdeviceptr y, int64_t m) {
  const gpu::CudaDriverApi& api = *device.api;
  const size_t row_bytes = static_cast<size_t>(reference.n) * 2;
  BENCH_CHECK(gpu::CudaCheck(api.cuStreamSynchronize(device.stream), "sync"));
  // 0xFFFF is NaN in fp16 and bf16. The memset runs on the legacy stream,
  // which the non-blocking bench stream does not wait for: synchronize.
  BENCH_CHECK(gpu::CudaCheck(api.cuMemsetD8(y, 0xFF, m * row_bytes), "poison"));
  BENCH_CHECK(gpu::CudaCheck(api.cuCtxSynchronize(), "poison sync"));
  BENCH_CHECK(layer.Forward(x, y, m, device.stream));
  BENCH_CHECK(
      gpu::CudaCheck(api.cuStreamSynchronize(device.stream), "check forward"));
  const std::vector<int64_t> rows = bench::SampleRows(m);
  std::vector<uint16_t> y_rows(rows.size() * reference.n);
  for (size_t i = 0; i < rows.size(); ++i) {
    BENCH_CHECK(
        gpu::CudaCheck(api.cuMemcpyDtoH(&y_rows[i * reference.n],
                                        y + rows[i] * row_bytes, row_bytes),
                       "cuMemcpyDtoH"));
  }
  return bench::CheckOutputRows(reference, x_bits, rows, y_rows);
}

struct RunOptions {
  std::string arch;
  int sm_count = 0;
  std::vector<bench::PlanOverride> overrides;
  std::string wgmma_copy;  // "", "bulk" or "cp_async"
  std::vector<int64_t> ms;
  std::map<std::string, double> cublas;  // CublasReference::times
  double l2_bytes = 0;
  std::string gpu_name;
  bench::GpuCeilings ceilings;
};

// Every M of one (spec, N×K): appends a row per M to `rows`.
void RunLayer(const Device& device, client::KernelClient& kernel_client,
              gpu::ArtifactCache& artifacts, const RunOptions& options,
              const std::string& spec_text, const QuantSpec& spec,
              const LayerShape& shape, std::vector<bench::GemmBenchRow>& rows) {
  const gpu::CudaDriverApi& api = *device.api;
  // Host seconds per phase, printed per layer: where a sweep line's device
  // time goes besides the timed replays (bench/README.md).
  using Clock = std::chrono::steady_clock;
  Clock::time_point phase_start = Clock::now();
  auto phase_seconds = [&phase_start] {
    const Clock::time_point now = Clock::now();
    const double seconds =
        std::chrono::duration<double>(now - phase_start).count();
    phase_start = now;
    return seconds;
  };
  v1::KernelRequest request;
  request.set_family(v1::KERNEL_FAMILY_GEMM);
  request.mutable_spec()->set_text(spec_text);
  request.mutable_shape()->set_n(shape.n);
  request.mutable_shape()->set_k(shape.k);
  request.mutable_gpu()->set_arch(options.arch);
  request.mutable_gpu()->set_sm_count(options.sm_count);
  // The layout QuantizedLinear passes; ApplyPlanOverrides reads it too.
  request.set_launch_abi(kCurrentLaunchAbi);
  auto resolved = Unwrap(kernel_client.Resolve(request), "resolve");
  v1::KernelSet set = *resolved;
  std::vector<bench::PlanOverride> overrides = options.overrides;
  if (!options.wgmma_copy.empty()) {
    overrides =
        Unwrap(bench::WgmmaCopyOverrides(set, options.wgmma_copy == "bulk"),
               "--wgmma_copy");
  }
  if (!overrides.empty()) {
    const KernelRequest plain =
        Unwrap(KernelRequestFromProto(request, RequestLimits{}), "request");
    BENCH_CHECK(bench::ApplyPlanOverrides(plain, overrides, set));
  }
  std::shared_ptr<const gpu::LoadedKernelSet> loaded =
      Unwrap(gpu::LoadedKernelSet::Load(set, artifacts), "load");
  const double resolve_seconds = phase_seconds();

  // Checkpoint tensors (random, valid), shared by every copy; each copy
  // repacks them into its own weights.
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  const DequantInputs inputs = MakeRandomDequantInputs(spec, shape, seed);
  const DequantLayout layout =
      Unwrap(DequantBufferLayout(spec, shape), "layout");
  const std::vector<uint16_t> bias_bits =
      spec.has_bias ? bench::RandomUnitBits(spec.output_type, shape.n, seed + 1)
                    : std::vector<uint16_t>();
  const int64_t max_m = *std::max_element(options.ms.begin(), options.ms.end());
  const std::vector<uint16_t> x_bits =
      bench::RandomUnitBits(spec.activation_type, max_m * shape.k, seed + 2);
  const bench::NumericsReference reference =
      Unwrap(bench::MakeNumericsReference(spec, shape, inputs, bias_bits),
             "numerics reference");

  const double inputs_seconds = phase_seconds();
  gpu::CheckpointWeights checkpoint;
  checkpoint.weights = Upload(api, inputs.weights.data(),
                              inputs.weights.size() * sizeof(uint32_t));
  checkpoint.scales = Upload(api, inputs.scales.data(), inputs.scales.size());
  checkpoint.zero_points =
      Upload(api, inputs.zero_points.data(), inputs.zero_points.size());
  checkpoint.secondary_scale =
      Upload(api, inputs.secondary_scales.data(),
             inputs.secondary_scales.size() * sizeof(float));
  checkpoint.bias = Upload(api, bias_bits.data(), bias_bits.size() * 2);
  const double weight_bytes = static_cast<double>(layout.weight_words) * 4.0;
  const int copies = std::max<int>(
      2, static_cast<int>(std::ceil(3 * options.l2_bytes / weight_bytes)) + 1);
  std::vector<std::unique_ptr<gpu::QuantizedLinear>> layers;
  for (int c = 0; c < copies; ++c) {
    layers.push_back(Unwrap(
        gpu::QuantizedLinear::Create(loaded, checkpoint, max_m, device.stream),
        "layer"));
  }
  BENCH_CHECK(gpu::CudaCheck(api.cuStreamSynchronize(device.stream), "repack"));
  BENCH_CHECK(gpu::CudaCheck(api.cuMemFree(checkpoint.weights), "free"));
  const CUdeviceptr x = Upload(api, x_bits.data(), x_bits.size() * 2);
  const CUdeviceptr y = Allocate(api, max_m * shape.n * 2);
  const double layers_seconds = phase_seconds();

  for (const int64_t m : options.ms) {
    bench::GemmBenchRow row;
    row.spec = spec_text;
    row.n = shape.n;
    row.k = shape.k;
    row.m = m;
    row.us = TimeForward(device, layers, x, y, m);
    for (const v1::Kernel& kernel : set.kernels()) {
      if (kernel.m_min() <= m && m <= kernel.m_max()) {
        row.kernel = kernel.config();
        row.splits = std::max<int64_t>(1, kernel.launch().grid_z());
      }
    }
    row.numerics = CheckForward(device, *layers[0], reference, x_bits, x, y, m);
    const double bytes = weight_bytes +
                         static_cast<double>(inputs.scales.size()) +
                         static_cast<double>(inputs.zero_points.size()) +
                         2.0 * m * shape.k + 2.0 * m * shape.n;
    row.gpu = options.gpu_name;
    row.copy_tbps = options.ceilings.copy_tbps.value;
    row.tensor_tflops = options.ceilings.tensor_tflops.value;
    row.roofline_us = std::max(
        bytes / (row.copy_tbps * 1e12) * 1e6,
        2.0 * m * shape.n * shape.k / (row.tensor_tflops * 1e12) * 1e6);
    row.target_us =
        bench::TargetUs(spec.weight.bits, shape.n, shape.k, m, row.roofline_us);
    const std::string dtype =
        spec.activation_type == DataType::kBf16 ? "bf16" : "fp16";
    auto it = options.cublas.find(
        absl::StrCat(shape.n, " ", shape.k, " ", m, " ", dtype));
    row.cublas_us = it == options.cublas.end() ? 0.0 : it->second;
    std::fprintf(stderr, "%s %lldx%lld M=%lld: %.1f us, rel_err %.2e%s\n",
                 spec_text.c_str(), static_cast<long long>(shape.n),
                 static_cast<long long>(shape.k), static_cast<long long>(m),
                 row.us, row.numerics.relative_error,
                 row.numerics.ok ? "" : " NUMERICS FAIL");
    rows.push_back(row);
  }
  std::fprintf(stderr,
               "phases %lldx%lld: resolve %.2f s, inputs %.2f s, layers "
               "%.2f s, measure %.2f s\n",
               static_cast<long long>(shape.n), static_cast<long long>(shape.k),
               resolve_seconds, inputs_seconds, layers_seconds,
               phase_seconds());
  layers.clear();
  Free(api, x);
  Free(api, y);
  Free(api, checkpoint.scales);
  Free(api, checkpoint.zero_points);
  Free(api, checkpoint.secondary_scale);
  Free(api, checkpoint.bias);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  Device device;
  device.api = Unwrap(gpu::CudaDriver(), "driver");
  const gpu::CudaDriverApi& api = *device.api;
  const gpu::CudaDevice gpu_device = Unwrap(gpu::UseDevice(0), "device");

  RunOptions options;
  options.arch =
      gpu_device.sm == 90 ? "sm_90a" : absl::StrCat("sm_", gpu_device.sm);
  options.sm_count = absl::GetFlag(FLAGS_plan_sm_count) > 0
                         ? absl::GetFlag(FLAGS_plan_sm_count)
                         : gpu_device.sm_count;
  options.overrides = Unwrap(
      bench::ParsePlanOverrides(absl::GetFlag(FLAGS_override)), "--override");
  options.wgmma_copy = absl::GetFlag(FLAGS_wgmma_copy);
  if (!options.wgmma_copy.empty() && options.wgmma_copy != "bulk" &&
      options.wgmma_copy != "cp_async") {
    std::fprintf(stderr, "--wgmma_copy takes bulk or cp_async\n");
    return 2;
  }
  if (!options.wgmma_copy.empty() && !options.overrides.empty()) {
    std::fprintf(stderr, "--wgmma_copy and --override exclude each other\n");
    return 2;
  }
  const CublasReference cublas = LoadCublas(absl::GetFlag(FLAGS_cublas_json));
  options.cublas = cublas.times;
  for (absl::string_view text : absl::StrSplit(absl::GetFlag(FLAGS_ms), ',')) {
    int64_t m = 0;
    if (absl::SimpleAtoi(text, &m) && m > 0) options.ms.push_back(m);
  }
  if (options.ms.empty()) {
    std::fprintf(stderr, "gemm_bench: --ms names no token count\n");
    return 2;
  }

  client::ClientOptions client_options;
  client_options.mode = client::ResolveMode::kEmbedded;
  client_options.embedded_cache_dir = absl::GetFlag(FLAGS_cache_dir);
  auto kernel_client =
      Unwrap(client::KernelClient::Create(client_options), "kernel client");
  gpu::ArtifactCache artifacts;
  BENCH_CHECK(
      gpu::CudaCheck(api.cuStreamCreate(&device.stream, CU_STREAM_NON_BLOCKING),
                     "cuStreamCreate"));
  BENCH_CHECK(
      gpu::CudaCheck(api.cuEventCreate(&device.start, 0), "cuEventCreate"));
  BENCH_CHECK(
      gpu::CudaCheck(api.cuEventCreate(&device.stop, 0), "cuEventCreate"));

  int l2_cache_bytes = 0;
  BENCH_CHECK(
      gpu::CudaCheck(api.cuDeviceGetAttribute(&l2_cache_bytes,
                                              CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
                                              gpu_device.device),
                     "L2 size"));
  // KERNELS.md's "60 MB" is the H200's 60 MiB L2 taken as 60e6 bytes, as
  // every committed table rotated over; it covers an H100's 50 MiB too. A
  // GPU with more L2 than the H200 rotates over its own.
  constexpr int kH200L2Bytes = 60 << 20;
  options.l2_bytes =
      absl::GetFlag(FLAGS_l2_bytes) > 0 ? absl::GetFlag(FLAGS_l2_bytes)
      : l2_cache_bytes > kH200L2Bytes   ? static_cast<double>(l2_cache_bytes)
                                        : 60e6;
  bench::CeilingEvidence evidence;
  evidence.gpu_name = gpu_device.name;
  evidence.sm = gpu_device.sm;
  evidence.flag_copy_tbps = absl::GetFlag(FLAGS_copy_tbps);
  evidence.flag_tensor_tflops = absl::GetFlag(FLAGS_tensor_tflops);
  evidence.measured_copy_tbps = MeasureCopyTbps(device);
  evidence.measured_tensor_tflops = cublas.tensor_tflops;
  options.gpu_name = gpu_device.name;
  options.ceilings = Unwrap(bench::ChooseCeilings(evidence), "ceilings");
  const std::string ceilings_line =
      absl::StrCat(bench::DescribeCeilings(evidence, options.ceilings),
                   " L2: ", l2_cache_bytes >> 20, " MiB; the copies exceed 3x ",
                   static_cast<int64_t>(options.l2_bytes) >> 20, " MiB.");
  std::fprintf(stderr, "%s\n", ceilings_line.c_str());

  absl::StatusOr<std::vector<LayerShape>> parsed_shapes =
      bench::ParseShapeList(absl::GetFlag(FLAGS_shapes));
  if (!parsed_shapes.ok()) {
    std::fprintf(stderr, "gemm_bench: --shapes: %s\n",
                 std::string(parsed_shapes.status().message()).c_str());
    return 2;
  }
  const std::vector<LayerShape>& shapes = *parsed_shapes;
  std::vector<bench::GemmBenchRow> rows;
  for (absl::string_view spec_text :
       absl::StrSplit(absl::GetFlag(FLAGS_specs), ';', absl::SkipEmpty())) {
    const QuantSpec spec =
        Unwrap(ParseSpecText(std::string(spec_text)), "spec");
    for (const LayerShape& shape : shapes) {
      RunLayer(device, *kernel_client, artifacts, options,
               std::string(spec_text), spec, shape, rows);
    }
  }

  const std::string table = bench::FormatMarkdownTable(rows);
  const std::string summary =
      absl::StrCat(bench::FormatSummary(rows), " (seed ",
                   absl::GetFlag(FLAGS_seed), ")\n", ceilings_line, "\n");
  std::printf("%s\n%s", table.c_str(), summary.c_str());
  if (!absl::GetFlag(FLAGS_markdown).empty()) {
    std::ofstream(absl::GetFlag(FLAGS_markdown)) << table << "\n" << summary;
  }
  if (!absl::GetFlag(FLAGS_json).empty()) {
    std::ofstream(absl::GetFlag(FLAGS_json)) << bench::FormatJson(rows);
  }
  const bool numerics_ok =
      std::all_of(rows.begin(), rows.end(),
                  [](const auto& row) { return row.numerics.ok; });
  return numerics_ok ? 0 : 1;
}
