// WNA16 GEMM on a real GPU: the GPU repack is byte-identical to the CPU
// reference, and for every format / scale kind / group size / dtype and
// every M range of each plan, Y = X . W^T (+ bias) matches an fp64
// reference on the exactly dequantized weights within
// ||out - ref|| / ||ref|| <= 1e-3 (fp16 out) / 8e-3 (bf16 out), with
// NaN-poisoned outputs and every element checked.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "hummingd/gpu/quantized_linear.h"
#include "kernels/gemm_config.h"
#include "kernels/k_major_scales.h"
#include "kernels/reference/dequant_reference.h"
#include "kernels/reference/format_reference.h"
#include "kernels/reference/fp64_dot.h"
#include "kernels/reference/gemm_layout.h"
#include "tests/gpu/gemm_cases.h"
#include "tests/gpu/gemm_support.h"
#include "tests/gpu/gpu_test_support.h"

namespace hummingd::gpu::testing {
namespace {

// Random 16-bit values in [-1, 1) of `type`: raw bits and decoded values.
void RandomHalves(DataType type, size_t count, std::mt19937_64& rng,
                  std::vector<uint16_t>& bits, std::vector<float>& values) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  bits.resize(count);
  values.resize(count);
  for (size_t i = 0; i < count; ++i) {
    bits[i] = static_cast<uint16_t>(ReferenceEncodeFloat(uniform(rng), type));
    values[i] = ReferenceDecodeScale(type, bits[i]);
  }
}

// ref[m][n] = sum_k x[m][k] w[n][k] (+ bias[n]) in fp64, rows split over
// the host's cores (K is a multiple of 64).
std::vector<double> ReferenceGemm(const std::vector<float>& x,
                                  const std::vector<float>& w,
                                  const std::vector<float>& bias, int64_t m,
                                  int64_t n, int64_t k) {
  std::vector<double> out(m * n);
  ParallelFor(m, [&](int worker, int workers) {
    for (int64_t row = worker; row < m; row += workers) {
      for (int64_t col = 0; col < n; ++col) {
        out[row * n + col] = Fp64Dot(&x[row * k], &w[col * k], k) +
                             (bias.empty() ? 0.0 : bias[col]);
      }
    }
  });
  return out;
}

class DeviceGemmLayer {
 public:
  absl::Status Init(const std::string& spec_text, int64_t n, int64_t k,
                    int64_t max_m, int64_t workspace_bytes,
                    int64_t counter_bytes, uint64_t seed) {
    ASSIGN_OR_RETURN(spec_, ParseSpecText(spec_text));
    shape_.n = n;
    shape_.k = k;
    max_m_ = max_m;
    reference_.clear();
    inputs_ = MakeRandomDequantInputs(spec_, shape_, seed);
    ASSIGN_OR_RETURN(w_, ReferenceDequantize(spec_, shape_, inputs_));
    std::mt19937_64 rng(seed ^ 0x9E3779B97F4A7C15ull);
    RandomHalves(spec_.activation_type, max_m * k, rng, x_bits_, x_);
    if (spec_.has_bias) {
      RandomHalves(spec_.output_type, n, rng, bias_bits_, bias_);
    }
    const size_t weight_bytes = inputs_.weights.size() * sizeof(uint32_t);
    RETURN_IF_ERROR(checkpoint_.Allocate(weight_bytes, inputs_.weights.data()));
    RETURN_IF_ERROR(fragments_.Allocate(weight_bytes));
    RETURN_IF_ERROR(fragments_.Fill(0xA5));
    RETURN_IF_ERROR(
        scales_.Allocate(inputs_.scales.size(), inputs_.scales.data()));
    // The copy that layout=kmajor tiles of group-scaled specs read, made as
    // QuantizedLinear makes it.
    if (KMajorScaleSourceOf(spec_) == KMajorScaleSource::kCopy) {
      const std::vector<unsigned char> k_major = TransposeScalesToKMajor(
          inputs_.scales.data(), n, k / spec_.group_size,
          DataTypeBytes(spec_.scale_type));
      RETURN_IF_ERROR(scales_k_major_.Allocate(k_major.size(), k_major.data()));
    }
    RETURN_IF_ERROR(zero_points_.Allocate(inputs_.zero_points.size(),
                                          inputs_.zero_points.data()));
    RETURN_IF_ERROR(
        secondary_.Allocate(inputs_.secondary_scales.size() * sizeof(float),
                            inputs_.secondary_scales.data()));
    RETURN_IF_ERROR(x_dev_.Allocate(x_bits_.size() * 2, x_bits_.data()));
    RETURN_IF_ERROR(
        bias_dev_.Allocate(bias_bits_.size() * 2, bias_bits_.data()));
    RETURN_IF_ERROR(y_.Allocate(max_m * n * 2));
    RETURN_IF_ERROR(workspace_.Allocate(workspace_bytes));
    RETURN_IF_ERROR(workspace_.Fill(0x7F));  // partials need no init
    RETURN_IF_ERROR(counters_.Allocate(counter_bytes));
    return counters_.Fill(0);  // zeroed once, as the contract asks
  }

  // Counters a launch left nonzero (the contract says none).
  absl::StatusOr<int64_t> NonzeroCounters() const {
    std::vector<uint32_t> counters(counters_.bytes() / 4);
    if (counters.empty()) return 0;
    RETURN_IF_ERROR(counters_.Download(counters.data(), counters_.bytes()));
    int64_t nonzero = 0;
    for (uint32_t c : counters) nonzero += c != 0;
    return nonzero;
  }

  // Repack on the GPU; the bytes must equal the CPU reference's.
  absl::StatusOr<int64_t> RepackAndCountMismatches(
      const LoadedKernelSet& repack) {
    RETURN_IF_ERROR(
        LaunchRepack(repack, checkpoint_.get(), fragments_.get(), nullptr));
    ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
    RETURN_IF_ERROR(CudaCheck(api->cuCtxSynchronize(), "cuCtxSynchronize"));
    std::vector<uint32_t> got(inputs_.weights.size());
    RETURN_IF_ERROR(fragments_.Download(got.data(), got.size() * 4));
    ASSIGN_OR_RETURN(std::vector<uint32_t> expected,
                     RepackWeightsForGemm(inputs_.weights, shape_.n, shape_.k,
                                          spec_.weight.bits));
    int64_t mismatches = 0;
    for (size_t i = 0; i < got.size(); ++i) mismatches += got[i] != expected[i];
    return mismatches;
  }

  GemmBuffers buffers() const {
    GemmBuffers b;
    b.x = x_dev_.get();
    b.weights = fragments_.get();
    b.scales = scales_.get();
    b.scales_k_major = scales_k_major_.get();
    b.zero_points = zero_points_.get();
    b.secondary_scale = secondary_.get();
    b.bias = bias_dev_.get();
    b.y = y_.get();
    b.workspace = workspace_.get();
    b.split_counters = counters_.get();
    return b;
  }

  absl::Status PoisonOutput() { return y_.Fill(0xFF); }

  struct Error {
    double relative = 0;
    int64_t non_finite = 0;
  };
  // Against the reference's first m rows: row i of Y depends on row i of X
  // only, so one reference of max_m rows serves every M of a case (it was
  // recomputed per M, ~3x the rows).
  absl::StatusOr<Error> Compare(int64_t m) {
    if (m > max_m_) {
      return absl::InvalidArgumentError(
          absl::StrCat("Compare: M = ", m, " past the layer's ", max_m_));
    }
    ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
    RETURN_IF_ERROR(CudaCheck(api->cuCtxSynchronize(), "cuCtxSynchronize"));
    std::vector<uint16_t> got(m * shape_.n);
    RETURN_IF_ERROR(y_.Download(got.data(), got.size() * 2));
    if (reference_.empty()) {
      reference_ = ReferenceGemm(x_, w_, bias_, max_m_, shape_.n, shape_.k);
    }
    const std::vector<double>& ref = reference_;
    Error error;
    double diff = 0;
    double norm = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double value = ReferenceDecodeScale(spec_.output_type, got[i]);
      if (!std::isfinite(value)) {
        ++error.non_finite;
        continue;
      }
      diff += (value - ref[i]) * (value - ref[i]);
      norm += ref[i] * ref[i];
    }
    // An element left as the NaN poison is an unwritten output: no relative
    // error over the others may pass for it.
    error.relative = error.non_finite > 0
                         ? std::numeric_limits<double>::infinity()
                         : std::sqrt(diff / std::max(norm, 1e-300));
    return error;
  }

  const QuantSpec& spec() const { return spec_; }

 private:
  QuantSpec spec_;
  LayerShape shape_;
  int64_t max_m_ = 0;
  std::vector<double> reference_;  // max_m_ x n, computed on first Compare
  DequantInputs inputs_;
  std::vector<float> w_;
  std::vector<uint16_t> x_bits_, bias_bits_;
  std::vector<float> x_, bias_;
  DeviceBuffer checkpoint_, fragments_, scales_, scales_k_major_, zero_points_,
      secondary_;
  DeviceBuffer x_dev_, bias_dev_, y_, workspace_, counters_;
};

class GemmCorrectnessTest : public ::testing::TestWithParam<GemmCase> {
 protected:
  // NVRTC dominates a case's time and compiles independent programs
  // safely in parallel, so every case's kernels are compiled up front over
  // the host's cores (ResolveGemm memoizes; a failure is left for its case
  // to resolve again and report).
  static void SetUpTestSuite() {
    if (!NoGpuReason().empty()) return;
    const std::string arch = TestArch(TestDevice());
    std::vector<GemmCase> all = CoveringCases();
    for (const GemmCase& c : DecodeCases()) all.push_back(c);
    const size_t count = all.size();
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < std::min<size_t>(threads, count); ++t) {
      pool.emplace_back([&] {
        for (size_t i = next++; i < count; i = next++) {
          (void)ResolveGemm(all[i].spec, all[i].n, all[i].k, arch).ok();
        }
      });
    }
    for (std::thread& thread : pool) thread.join();
  }
};

TEST_P(GemmCorrectnessTest, RepackIsExactAndEveryRangeMatchesFp64) {
  HUMMINGD_REQUIRE_GPU();
  const GemmCase& c = GetParam();
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::string arch = TestArch(TestDevice());
  absl::StatusOr<GemmLayerKernels> kernels =
      ResolveGemm(c.spec, c.n, c.k, arch);
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  ArtifactCache cache;
  auto gemm = LoadedKernelSet::Load(kernels->gemm, cache);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  auto repack = LoadedKernelSet::Load(kernels->repack, cache);
  ASSERT_TRUE(repack.ok()) << repack.status();

  const std::vector<int64_t> ms = MValues(c.m_set);
  int64_t workspace = 0;
  int64_t counters = 0;
  std::vector<bool> range_hit(kernels->plan.entries.size(), false);
  for (int64_t m : ms) {
    absl::StatusOr<const PlanEntry*> entry = GemmEntryForM(kernels->plan, m);
    ASSERT_TRUE(entry.ok()) << entry.status();
    workspace = std::max(workspace, GemmWorkspaceBytes(**entry, m));
    counters = std::max(counters, GemmCounterBytes(**entry, m));
    range_hit[*entry - kernels->plan.entries.data()] = true;
  }
  if (c.m_set != kLarge && c.m_set != kDecode) {
    for (size_t i = 0; i < range_hit.size(); ++i) {
      EXPECT_TRUE(range_hit[i]) << "range " << i << " not exercised";
    }
  }

  DeviceGemmLayer layer;
  absl::Status init =
      layer.Init(c.spec, c.n, c.k, ms.back(), workspace, counters, seed);
  ASSERT_TRUE(init.ok()) << init;
  absl::StatusOr<int64_t> repack_mismatches =
      layer.RepackAndCountMismatches(**repack);
  ASSERT_TRUE(repack_mismatches.ok()) << repack_mismatches.status();
  EXPECT_EQ(*repack_mismatches, 0) << "GPU repack differs from the CPU";

  // bf16 operands (weights are dequantized into the activation type) carry
  // the same 8-bit significand as a bf16 output, so they get its bound.
  const double tolerance =
      layer.spec().output_type == DataType::kBf16 ||
              layer.spec().activation_type == DataType::kBf16
          ? 8e-3
          : 1e-3;
  for (int64_t m : ms) {
    SCOPED_TRACE(::testing::Message() << "M=" << m);
    ASSERT_TRUE(layer.PoisonOutput().ok());
    absl::Status launched = LaunchGemm(**gemm, layer.buffers(), m, nullptr);
    ASSERT_TRUE(launched.ok()) << launched;
    absl::StatusOr<DeviceGemmLayer::Error> error = layer.Compare(m);
    ASSERT_TRUE(error.ok()) << error.status();
    EXPECT_EQ(error->non_finite, 0);
    EXPECT_LE(error->relative, tolerance);
    std::cout << "[ gemm     ] " << c.spec << " N=" << c.n << " K=" << c.k
              << " M=" << m << " rel_err=" << error->relative << "\n";
  }
  absl::StatusOr<int64_t> nonzero = layer.NonzeroCounters();
  ASSERT_TRUE(nonzero.ok()) << nonzero.status();
  EXPECT_EQ(*nonzero, 0) << "split-K counters must be left zeroed";
  // A second launch over the same (self-resetting) workspace agrees.
  ASSERT_TRUE(layer.PoisonOutput().ok());
  ASSERT_TRUE(LaunchGemm(**gemm, layer.buffers(), ms[0], nullptr).ok());
  absl::StatusOr<DeviceGemmLayer::Error> again = layer.Compare(ms[0]);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->non_finite, 0);
  EXPECT_LE(again->relative, tolerance);
}

INSTANTIATE_TEST_SUITE_P(Formats, GemmCorrectnessTest,
                         ::testing::ValuesIn(CoveringCases()));
INSTANTIATE_TEST_SUITE_P(Decode, GemmCorrectnessTest,
                         ::testing::ValuesIn(DecodeCases()));

}  // namespace
}  // namespace hummingd::gpu::testing
