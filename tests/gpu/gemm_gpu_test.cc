// WNA16 GEMM on a real GPU: the GPU repack is byte-identical to the CPU
// reference, and for every format / scale kind / group size / dtype and
// every M range of each plan, Y = X . W^T (+ bias) matches an fp64
// reference on the exactly dequantized weights within
// ||out - ref|| / ||ref|| <= 1e-3 (fp16 out) / 8e-3 (bf16 out), with
// NaN-poisoned outputs and every element checked.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "hummingd/gpu/cuda_driver.h"
#include "hummingd/gpu/loaded_kernel_set.h"
#include "hummingd/gpu/quantized_linear.h"
#include "kernels/gemm_config.h"
#include "kernels/gpu_target.h"
#include "kernels/k_major_scales.h"
#include "kernels/launch_abi.h"
#include "kernels/layer_shape.h"
#include "kernels/planner.h"
#include "kernels/reference/dequant_reference.h"
#include "kernels/reference/format_reference.h"
#include "kernels/reference/gemm_layout.h"
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
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t row = t; row < m; row += threads) {
        const float* xr = &x[row * k];
        for (int64_t col = 0; col < n; ++col) {
          const float* wr = &w[col * k];
          // Four independent sums (K is a multiple of 64) so the adds
          // pipeline; float products are exact in fp64.
          double sum[4] = {0, 0, 0, 0};
          for (int64_t i = 0; i < k; i += 4) {
            for (int j = 0; j < 4; ++j) {
              sum[j] += static_cast<double>(xr[i + j]) *
                        static_cast<double>(wr[i + j]);
            }
          }
          out[row * n + col] = (sum[0] + sum[1]) + (sum[2] + sum[3]) +
                               (bias.empty() ? 0.0 : bias[col]);
        }
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
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
  absl::StatusOr<Error> Compare(int64_t m) const {
    ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
    RETURN_IF_ERROR(CudaCheck(api->cuCtxSynchronize(), "cuCtxSynchronize"));
    std::vector<uint16_t> got(m * shape_.n);
    RETURN_IF_ERROR(y_.Download(got.data(), got.size() * 2));
    const std::vector<double> ref =
        ReferenceGemm(x_, w_, bias_, m, shape_.n, shape_.k);
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
    error.relative = std::sqrt(diff / std::max(norm, 1e-300));
    return error;
  }

  const QuantSpec& spec() const { return spec_; }

 private:
  QuantSpec spec_;
  LayerShape shape_;
  DequantInputs inputs_;
  std::vector<float> w_;
  std::vector<uint16_t> x_bits_, bias_bits_;
  std::vector<float> x_, bias_;
  DeviceBuffer checkpoint_, fragments_, scales_, scales_k_major_, zero_points_,
      secondary_;
  DeviceBuffer x_dev_, bias_dev_, y_, workspace_, counters_;
};

// Which M values a case runs: every range of its plan (kSmall), or, for a
// real layer, fewer (kLarge: no M past 1024) or M up to 4096.
// kDecode: the M <= 64 ranges only, at every boundary of Hopper's wgmma
// decode plan (1-8, 9-16, 17-32, 33-64).
enum GemmMSet { kSmall, kLarge, kLargeWithM4096, kDecode };

struct GemmCase {
  const char* spec;
  int64_t n;
  int64_t k;
  GemmMSet m_set;
};

void PrintTo(const GemmCase& c, std::ostream* os) {
  *os << c.spec << " n=" << c.n << " k=" << c.k;
}

// M = 1, 7, 16, 17, 64, 100, 257, 1000 everywhere; 200, 1100 and 2100 (or
// 1100 and 4096) so that every range above 64 runs too (Hopper's merged
// steps of 64 tokens, which 160, 240, 360, 400, 600, 700 and 800 complete
// on the layers here, and the open range above 2048; elsewhere 65..256,
// 257..1024, > 1024).
std::vector<int64_t> MValues(GemmMSet m_set) {
  switch (m_set) {
    case kSmall:
      return {1,   7,   16,  17,  64,  100, 160,  200,  240,
              257, 360, 400, 600, 700, 800, 1000, 1100, 2100};
    case kLarge:
      return {1, 7, 16, 17, 64, 100, 257, 1000};
    case kLargeWithM4096:
      return {1,   7,   16,  17,  64,   100,  200, 257,
              400, 600, 700, 800, 1000, 1100, 4096};
    case kDecode:
      return {1, 7, 8, 9, 16, 17, 32, 33, 64};
  }
  return {};
}

// The covering grid (issue 4): every weight format x every scale
// granularity x every scale dtype x both 16-bit activation / output types,
// plus secondary scales, zero points and bias, each pair of options met in
// at least one case (not the full product). Shapes: the smallest legal
// (16 x 64), odd multiples of the units (48 x 192, 80 x 320, ...) and real
// layers (4096 x 4096, 6144 x 4096) for a few cases only (the fp64
// reference is the cost).
const GemmCase kCases[] = {
    // uint1 .. uint8, symmetric (implicit mid-point).
    {"weight=uint1,group=32,scale=fp16", 16, 64, kSmall},
    {"weight=uint1,group=16,scale=fp16", 32, 128, kSmall},
    {"weight=uint1,group=channel,scale=bf16,act=bf16,out=bf16", 48, 192,
     kSmall},
    {"weight=uint2,group=64,scale=fp32", 80, 320, kSmall},
    {"weight=uint2,group=32,scale=fp16", 48, 256, kSmall},
    {"weight=uint2,group=tensor,scale=fp16,act=bf16", 64, 256, kSmall},
    {"weight=uint2,group=128,scale=e4m3,out=bf16", 128, 256, kSmall},
    {"weight=uint3,group=32,scale=bf16,act=bf16,out=bf16", 48, 192, kSmall},
    {"weight=uint3,group=64,scale=fp32,out=bf16", 80, 384, kSmall},
    {"weight=uint3,group=256,scale=fp16", 96, 512, kSmall},
    {"weight=uint3,group=128x128,scale=fp32", 256, 384, kSmall},
    {"weight=uint3,group=64,scale=e5m2,out=bf16", 80, 320, kSmall},
    {"weight=uint4,group=128,scale=fp16", 4096, 4096, kLargeWithM4096},
    // Hopper: split-K 128-token tiles, in grouped order at M = 600.
    {"weight=uint4,group=128,scale=fp16", 1024, 8192, kSmall},
    {"weight=uint4,group=128,scale=fp16", 64, 128, kSmall},
    {"weight=uint4,group=64,scale=fp16", 16, 64, kSmall},
    {"weight=uint4,group=32,scale=fp16", 16, 64, kSmall},
    {"weight=uint4,group=64,scale=bf16,act=bf16,out=bf16", 80, 320, kSmall},
    {"weight=uint4,group=256,scale=fp32,act=bf16", 128, 512, kSmall},
    {"weight=uint4,group=channel,scale=e4m3", 48, 192, kSmall},
    {"weight=uint4,group=tensor,scale=ue8m0,act=bf16,out=bf16", 64, 256,
     kSmall},
    {"weight=uint4,group=128x128,scale=bf16,act=bf16,out=bf16", 128, 256,
     kSmall},
    {"weight=uint4,group=128,scale=fp16,scale2=channel", 208, 640, kSmall},
    {"weight=uint4,group=64,scale=fp16,bias=1,scale2=channel", 160, 256,
     kSmall},
    {"weight=uint4,group=64,scale=fp16,bias=1", 16, 64, kSmall},
    {"weight=uint5,group=32,scale=fp16,act=bf16", 64, 192, kSmall},
    {"weight=uint5,group=channel,scale=fp32,out=bf16", 80, 320, kSmall},
    {"weight=uint5,group=128,scale=ue8m0", 96, 384, kSmall},
    {"weight=uint6,group=channel,scale=e4m3", 96, 256, kSmall},
    {"weight=uint6,group=64,scale=bf16,act=bf16,out=bf16", 48, 192, kSmall},
    {"weight=uint6,group=256,scale=fp16,bias=1", 112, 768, kSmall},
    {"weight=uint7,group=tensor,scale=fp32,scale2=tensor", 48, 128, kSmall},
    {"weight=uint7,group=32,scale=fp16", 16, 64, kSmall},
    {"weight=uint7,group=128,scale=bf16,act=bf16", 144, 384, kSmall},
    {"weight=uint8,group=channel,scale=fp16", 192, 320, kSmall},
    {"weight=uint8,group=128,scale=fp16,bias=1,out=bf16", 64, 512, kSmall},
    {"weight=uint8,group=32,scale=bf16,act=bf16,out=bf16", 80, 320, kSmall},
    {"weight=uint8,group=128x128,scale=fp32,act=bf16,out=bf16", 256, 512,
     kSmall},
    {"weight=uint8,group=tensor,scale=e4m3", 48, 192, kSmall},
    // uint4 / uint8 with integer zero points.
    {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16", 6144, 4096,
     kLarge},
    {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16", 208, 640,
     kSmall},
    {"weight=uint4,group=128,scale=fp16,zero=int", 4096, 4096, kLarge},
    {"weight=uint4,group=32,scale=fp16,zero=int", 16, 64, kSmall},
    {"weight=uint4,group=64,scale=fp16,zero=int,bias=1", 48, 192, kSmall},
    {"weight=uint4,group=256,scale=fp32,zero=int", 128, 512, kSmall},
    // N a multiple of 256: Hopper's 256-row 64-token tile (from M = 129,
    // where the 128-row one holds a block per SM) with integer zero points
    // and with 5-bit weights.
    {"weight=uint4,group=128,scale=fp16,zero=int", 256, 512, kSmall},
    {"weight=uint5,group=128,scale=bf16,act=bf16,out=bf16", 256, 384, kSmall},
    {"weight=uint4,group=channel,scale=fp16,zero=int,act=bf16", 80, 320,
     kSmall},
    {"weight=uint4,group=128,scale=fp16,zero=int,scale2=channel", 96, 384,
     kSmall},
    {"weight=uint4,group=128x128,scale=e4m3,zero=int", 128, 256, kSmall},
    {"weight=uint8,group=128,scale=fp16,zero=int", 64, 256, kSmall},
    {"weight=uint8,group=channel,scale=bf16,zero=int,act=bf16,out=bf16", 48,
     192, kSmall},
    {"weight=uint8,group=32,scale=fp32,zero=int,out=bf16", 80, 320, kSmall},
    {"weight=uint8,group=tensor,scale=fp16,zero=int", 16, 64, kSmall},
    // uint4 with float zero points (activation dtype).
    {"weight=uint4,group=128,scale=fp16,zero=float", 128, 256, kSmall},
    {"weight=uint4,group=32,scale=bf16,zero=float,act=bf16,out=bf16", 64, 192,
     kSmall},
    {"weight=uint4,group=64,scale=fp16,zero=float,bias=1", 80, 320, kSmall},
    {"weight=uint4,group=channel,scale=fp32,zero=float,act=bf16", 48, 192,
     kSmall},
    {"weight=uint4,group=256,scale=bf16,zero=float,act=bf16,out=bf16", 128, 512,
     kSmall},
    // Signed integers (two's complement, no offset).
    {"weight=int4,group=128,scale=fp16", 256, 512, kSmall},
    {"weight=int4,group=32,scale=bf16,act=bf16,out=bf16", 16, 64, kSmall},
    {"weight=int4,group=channel,scale=e4m3,bias=1", 80, 320, kSmall},
    {"weight=int4,group=128x128,scale=fp32", 128, 256, kSmall},
    {"weight=int4,group=64,scale=fp16,scale2=tensor", 48, 192, kSmall},
    {"weight=int8,group=channel,scale=bf16,act=bf16", 112, 192, kSmall},
    {"weight=int8,group=128,scale=fp16", 64, 256, kSmall},
    {"weight=int8,group=tensor,scale=fp32,out=bf16", 48, 192, kSmall},
    {"weight=int8,group=256,scale=ue8m0,act=bf16,out=bf16", 80, 512, kSmall},
    // fp8 weights; e5m2 only with bf16 (its range overflows fp16 sums).
    {"weight=e4m3,group=channel,scale=fp32,act=bf16,out=bf16", 128, 256,
     kSmall},
    {"weight=e4m3,group=128x128,scale=fp32", 256, 384, kSmall},
    {"weight=e4m3,group=128x128,scale=fp32,act=bf16,out=bf16", 4096, 4096,
     kLargeWithM4096},
    {"weight=e4m3,group=tensor,scale=fp32", 16, 64, kSmall},
    {"weight=e4m3,group=32,scale=ue8m0,act=bf16,out=bf16", 48, 192, kSmall},
    {"weight=e4m3,group=128,scale=bf16,act=bf16,bias=1", 80, 384, kSmall},
    // W8A16 e4m3 as issue 5 benchmarks it (fp16 scales and activations).
    {"weight=e4m3,group=128,scale=fp16", 128, 512, kSmall},
    {"weight=e5m2,group=128,scale=bf16,act=bf16,out=bf16", 64, 256, kSmall},
    {"weight=e5m2,group=channel,scale=fp32,act=bf16,out=bf16", 48, 192, kSmall},
    {"weight=e5m2,group=32,scale=ue8m0,act=bf16,out=bf16", 80, 320, kSmall},
    {"weight=e5m2,group=tensor,scale=fp32,act=bf16,out=bf16", 16, 128, kSmall},
    // fp4 / fp6 weights (MXFP4, NVFP4, MXFP6 and plain scales).
    {"weight=e2m1,group=32,scale=ue8m0,act=bf16,out=bf16", 96, 2880, kSmall},
    {"weight=e2m1,group=16,scale=e4m3,scale2=tensor", 128, 256, kSmall},
    {"weight=e2m1,group=16,scale=e4m3,scale2=tensor,act=bf16,out=bf16", 6144,
     4096, kLarge},
    {"weight=e2m1,group=32,scale=fp16", 16, 64, kSmall},
    {"weight=e2m1,group=128,scale=bf16,act=bf16,out=bf16,bias=1", 80, 384,
     kSmall},
    {"weight=e2m1,group=channel,scale=fp32", 48, 192, kSmall},
    {"weight=e3m2,group=32,scale=fp16", 48, 192, kSmall},
    {"weight=e3m2,group=128,scale=bf16,act=bf16,out=bf16", 128, 256, kSmall},
    {"weight=e3m2,group=channel,scale=e4m3,out=bf16", 16, 64, kSmall},
    {"weight=e3m2,group=64,scale=ue8m0,act=bf16,out=bf16,scale2=channel", 80,
     320, kSmall},
    {"weight=e2m3,group=32,scale=ue8m0,act=bf16,out=bf16", 64, 192, kSmall},
    {"weight=e2m3,group=256,scale=fp16", 96, 512, kSmall},
    {"weight=e2m3,group=tensor,scale=fp32,bias=1", 48, 192, kSmall},
    {"weight=e2m3,group=128x128,scale=bf16,act=bf16,out=bf16", 128, 128,
     kSmall},
};

// Every spec of the grid again on a layer whose N is a multiple of 64, so
// that on Hopper each format also runs through the wgmma decode kernels
// (N = 64 * odd exercises the one-warpgroup tile, multiples of 128 the
// two-warpgroup one). M <= 64 only; the grid's own cases run M > 64 (on
// Hopper the 64-token wgmma tiles where N and K are multiples of 128).
// Plus real layers, where the planner picks what small layers never get:
// 4-bit 14336 x 4096 runs 256-column k-tiles in splits of 8 k-tiles at 8,
// 16 and 32 tokens (planner v16, v18: 16x128x256 four stages, 32x128x256
// three); 4-bit 6144 x 4224 (K not a multiple of 256) four 8-token blocks per
// SM and three 16-token ones (blocks=3); 8-bit 128-column k-tiles in 4
// splits at 8 tokens (v18; on uint8 10240 x 8192 since v21, where 8192 x 8192
// takes four-per-SM k-split warps); with bf16 activations (splits that long
// are bf16's limit) two 64-row blocks per warpgroup (BN 256) at 8 tokens, with
// k-major scales (groups wider than a k-tile); 4-bit 8192 x 8192 with groups
// of 64 BN 256 at 8 and 16 tokens (splits of >= 8 k-tiles), k-major with
// groups narrower than a k-tile; 8-bit channel-wise 8192 x 8192 (bf16) BN 256
// at 8 tokens, whose k-major scales are the checkpoint tensor itself; 4-bit
// 1024 x 4096 with integer zero points at 8 (8 splits of 64 blocks), and
// 5120 x 4096 three per SM at 8 (320 blocks); 4-bit
// 4096 x 4096 (fp16) and 6144 x 4096 (bf16), uint8 4096 x 4096 and e4m3
// 6144 x 4096 run k-split warps at 8 tokens (16- and 32-row blocks, unsplit;
// planner v19), 4-bit 8192 x 8192 too (32-row blocks on K = 8192, v20), and
// uint8 4096 x 4096 and e4m3 4096 x 4096 at 16 tokens (two m16n8k16 per
// step, v20); uint8 8192 x 8192 in 16-row blocks four per SM and e4m3
// 4096 x 14336 two per SM at 8 tokens (v21), while uint8 10240 x 8192 keeps
// the 8-bit long splits; uint8 4096 x 16384 two per SM at 8 tokens, uint8
// 4096 x 4096 with bf16 activations at 8 and 16 tokens, and e4m3 6144 x 4096
// three 16-token blocks per SM (v23); 4-bit 4096 x 4096 (fp16) 32-row
// blocks of sixteen warps one per SM at 16 tokens (v24); 4-bit and 8-bit
// 34048 x 4096, whose 266 128-row n-blocks are more than a wave of two per SM
// holds, unsplit (v26: 256-row k-major tiles at 8 and 16 tokens, 32x128x256 at
// 32, the 8-bit 8x128x128 at 8); 4-bit 4096 x 14336 (fp16 and bf16) in
// 64-row blocks of four warps four per SM at 8 tokens (8 splits of 7 k-tiles,
// v34); scale groups of 32 on the group-128 tiles (v35: k-split warps at 8
// tokens on 4096 x 4096, here with integer zero points) and, on
// 8192 x 8192, the 64-row half tile in 4 splits at 8 tokens (v36; MXFP4
// with bf16 activations too). (Bulk (TMA) weight
// copies are no longer planned, planner v6; hummingd_gemm_bench --override
// still times them and checks their numerics.)
std::vector<GemmCase> DecodeCases() {
  std::vector<GemmCase> cases;
  for (const GemmCase& c : kCases) {
    if (c.m_set != kSmall) continue;
    int64_t n = c.n;
    while (n % 64 != 0) n *= 2;
    cases.push_back(GemmCase{c.spec, n, c.k, kDecode});
  }
  // The real layers of the comment above.
  const GemmCase kRealLayers[] = {
      {"weight=uint4,group=128,scale=fp16", 14336, 4096, kDecode},
      {"weight=uint4,group=128,scale=fp16", 6144, 4224, kDecode},
      {"weight=uint8,group=128,scale=fp16", 8192, 8192, kDecode},
      {"weight=uint8,group=128,scale=bf16,act=bf16,out=bf16", 8192, 8192,
       kDecode},
      {"weight=uint4,group=64,scale=fp16", 8192, 8192, kDecode},
      {"weight=uint8,group=channel,scale=bf16,act=bf16,out=bf16", 8192, 8192,
       kDecode},
      {"weight=uint4,group=128,scale=fp16", 4096, 4096, kDecode},
      {"weight=uint8,group=128,scale=fp16", 4096, 4096, kDecode},
      {"weight=e4m3,group=128,scale=fp16", 6144, 4096, kDecode},
      {"weight=uint4,group=128,scale=fp16", 5120, 4096, kDecode},
      {"weight=uint4,group=128,scale=fp16", 8192, 8192, kDecode},
      {"weight=uint8,group=128,scale=fp16", 10240, 8192, kDecode},
      {"weight=e4m3,group=128,scale=fp16", 4096, 14336, kDecode},
      {"weight=e4m3,group=128,scale=fp16", 4096, 4096, kDecode},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 6144, 4096,
       kDecode},
      {"weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16", 1024,
       4096, kDecode},
      {"weight=uint8,group=128,scale=fp16", 4096, 16384, kDecode},
      {"weight=uint8,group=128,scale=bf16,act=bf16,out=bf16", 4096, 4096,
       kDecode},
      {"weight=uint4,group=128,scale=fp16", 34048, 4096, kDecode},
      {"weight=uint8,group=128,scale=fp16", 34048, 4096, kDecode},
      {"weight=uint4,group=128,scale=fp16", 4096, 14336, kDecode},
      {"weight=uint4,group=128,scale=bf16,act=bf16,out=bf16", 4096, 14336,
       kDecode},
      {"weight=uint4,group=32,scale=fp16", 8192, 8192, kDecode},
      {"weight=uint4,group=32,scale=fp16,zero=int", 4096, 4096, kDecode},
      {"weight=e2m1,group=32,scale=ue8m0,act=bf16,out=bf16", 8192, 8192,
       kDecode},
  };
  cases.insert(cases.end(), std::begin(kRealLayers), std::end(kRealLayers));
  return cases;
}

// The grid itself, without a GPU (so CI checks it): every case is a legal,
// plannable GEMM layer, and its M values reach every range of the plan.
TEST(GemmCaseGridTest, EveryCaseIsPlannableAndCoversItsRanges) {
  absl::StatusOr<GpuTarget> gpu = ParseGpuArch("sm_90a");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  for (const GemmCase& c : kCases) {
    SCOPED_TRACE(::testing::Message()
                 << c.spec << " n=" << c.n << " k=" << c.k);
    absl::StatusOr<QuantSpec> spec = ParseSpecText(c.spec);
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_TRUE(ValidateSpec(*spec).ok()) << ValidateSpec(*spec);
    KernelRequest request;
    request.family = KernelFamily::kGemm;
    request.spec = *spec;
    request.shape.n = c.n;
    request.shape.k = c.k;
    request.gpu = *gpu;
    request.launch_abi = kCurrentLaunchAbi;
    const absl::Status shape =
        ValidateShape(*spec, request.shape, request.family, ShapeLimits{});
    EXPECT_TRUE(shape.ok()) << shape;
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::vector<bool> range_hit(plan->entries.size(), false);
    for (int64_t m : MValues(c.m_set)) {
      absl::StatusOr<const PlanEntry*> entry = GemmEntryForM(*plan, m);
      ASSERT_TRUE(entry.ok()) << entry.status();
      range_hit[*entry - plan->entries.data()] = true;
    }
    if (c.m_set != kLarge) {
      for (size_t i = 0; i < range_hit.size(); ++i) {
        EXPECT_TRUE(range_hit[i]) << "range " << i << " not exercised";
      }
    }
  }
}

// The decode variants reach every decode (M <= 64) range of their sm_90a
// plan.
TEST(GemmCaseGridTest, DecodeCasesCoverEveryWgmmaRange) {
  absl::StatusOr<GpuTarget> gpu = ParseGpuArch("sm_90a");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  const std::vector<GemmCase> cases = DecodeCases();
  ASSERT_GT(cases.size(), 40u);
  for (const GemmCase& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.spec << " n=" << c.n << " k=" << c.k);
    KernelRequest request;
    request.family = KernelFamily::kGemm;
    absl::StatusOr<QuantSpec> spec = ParseSpecText(c.spec);
    ASSERT_TRUE(spec.ok()) << spec.status();
    request.spec = *spec;
    request.shape.n = c.n;
    request.shape.k = c.k;
    request.gpu = *gpu;
    request.launch_abi = kCurrentLaunchAbi;
    EXPECT_TRUE(
        ValidateShape(*spec, request.shape, request.family, ShapeLimits{})
            .ok());
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    int wgmma_ranges_hit = 0;
    int wgmma_ranges = 0;
    std::vector<bool> hit(plan->entries.size(), false);
    for (int64_t m : MValues(c.m_set)) {
      absl::StatusOr<const PlanEntry*> entry = GemmEntryForM(*plan, m);
      ASSERT_TRUE(entry.ok()) << entry.status();
      hit[*entry - plan->entries.data()] = true;
    }
    // (The 64-token tiles above M = 64 run in the Formats cases.)
    for (size_t i = 0; i < plan->entries.size(); ++i) {
      if (plan->entries[i].config.skeleton != kGemmWgmmaSkeleton ||
          plan->entries[i].m_max > 64) {
        continue;
      }
      ++wgmma_ranges;
      if (hit[i]) ++wgmma_ranges_hit;
    }
    EXPECT_EQ(wgmma_ranges, 4);
    EXPECT_EQ(wgmma_ranges_hit, 4);
  }
  // The real layers reach the wide tiles, at 8 tokens and at 16, the tiles
  // that run four (8 tokens) and three (16 tokens) blocks per SM, and
  // k-major scales both from a transposed copy (groups) and from the
  // checkpoint tensor (channel-wise), and planner v18's 32-token 256-column
  // tiles and 8-bit 8-token long splits on a large layer.
  int wide_k_32 = 0;
  int w8_long_splits = 0;
  int k_split_4bit = 0;
  int k_split_8bit = 0;
  int k_split_long_k = 0;
  int k_split_long_k_8bit = 0;
  int k_split_16_tokens = 0;
  int k_split_four_per_sm = 0;
  int k_split_three_per_sm = 0;
  int k_split_16_tokens_bf16 = 0;
  int k_split_k16384 = 0;
  int k_split_sixteen_warps = 0;
  int wide = 0;
  int wide_16 = 0;
  int four_per_sm = 0;
  int three_per_sm = 0;
  int k_major_copy = 0;
  int k_major_checkpoint = 0;
  int wider_than_a_wave_unsplit = 0;
  for (const GemmCase& c : cases) {
    KernelRequest request;
    request.family = KernelFamily::kGemm;
    request.spec = *ParseSpecText(c.spec);
    request.shape.n = c.n;
    request.shape.k = c.k;
    request.gpu = *gpu;
    request.launch_abi = kCurrentLaunchAbi;
    absl::StatusOr<Plan> plan = PlanKernels(request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (const PlanEntry& entry : plan->entries) {
      absl::StatusOr<GemmTileConfig> tile =
          ParseGemmTileText(entry.config.text);
      ASSERT_TRUE(tile.ok()) << tile.status();
      if (tile->mma != GemmMma::kWgmma) continue;
      wide += tile->block_n == 256 ? 1 : 0;
      wide_k_32 += tile->block_m == 32 && tile->block_k == 256;
      k_split_4bit += tile->warp_split_k > 1 && request.spec.weight.bits <= 4;
      k_split_8bit += tile->warp_split_k > 1 && request.spec.weight.bits == 8;
      k_split_long_k += tile->warp_split_k > 1 && request.shape.k > 4096;
      k_split_long_k_8bit += tile->warp_split_k > 1 && request.shape.k > 4096 &&
                             request.spec.weight.bits == 8;
      k_split_16_tokens += tile->warp_split_k > 1 && tile->block_m == 16;
      k_split_four_per_sm +=
          tile->warp_split_k > 1 && WgmmaBlocksPerSm(*tile) == 4;
      k_split_three_per_sm += tile->warp_split_k > 1 && tile->block_m == 16 &&
                              WgmmaBlocksPerSm(*tile) == 3;
      k_split_16_tokens_bf16 += tile->warp_split_k > 1 && tile->block_m == 16 &&
                                request.spec.activation_type == DataType::kBf16;
      k_split_k16384 += tile->warp_split_k > 1 && request.shape.k == 16384;
      k_split_sixteen_warps += tile->warp_split_k > 1 && tile->warps_n == 16 &&
                               WgmmaBlocksPerSm(*tile) == 1;
      w8_long_splits += request.spec.weight.bits == 8 && tile->block_m == 8 &&
                        tile->block_n == 128 &&
                        request.shape.n * request.shape.k >= 8192 * 8192;
      wide_16 += tile->block_n == 256 && tile->block_m == 16 ? 1 : 0;
      // The 4-bit four-per-SM tile (8-bit 8-token tiles on small layers
      // share its text and launch bounds, but their shared memory admits
      // only two).
      four_per_sm += WgmmaBlocksPerSm(*tile) == 4 && entry.launch.grid_z > 1 &&
                     request.spec.weight.bits <= 4;
      three_per_sm += tile->blocks_per_sm == 3 && entry.launch.grid_z > 1;
      wider_than_a_wave_unsplit += request.shape.n / 128 > 2 * 132 &&
                                   entry.launch.grid_z == 1 &&
                                   entry.launch.grid_y > 132;
      if (tile->k_major_scales) {
        const KMajorScaleSource source = KMajorScaleSourceOf(request.spec);
        k_major_copy += source == KMajorScaleSource::kCopy;
        k_major_checkpoint += source == KMajorScaleSource::kCheckpoint;
      }
    }
  }
  EXPECT_GE(wide_k_32, 1);
  EXPECT_GE(k_split_4bit, 2);
  EXPECT_GE(k_split_8bit, 2);
  EXPECT_GE(k_split_long_k, 1);
  EXPECT_GE(k_split_long_k_8bit, 2);
  EXPECT_GE(k_split_16_tokens, 2);
  EXPECT_GE(k_split_four_per_sm, 1);
  EXPECT_GE(k_split_three_per_sm, 1);
  EXPECT_GE(k_split_16_tokens_bf16, 1);
  EXPECT_GE(k_split_k16384, 1);
  EXPECT_GE(k_split_sixteen_warps, 1);
  EXPECT_GE(w8_long_splits, 1);
  EXPECT_GE(wide, 2);
  EXPECT_GE(wide_16, 1);
  EXPECT_GE(four_per_sm, 1);
  EXPECT_GE(three_per_sm, 1);
  EXPECT_GE(k_major_copy, 1);
  EXPECT_GE(k_major_checkpoint, 1);
  EXPECT_GE(wider_than_a_wave_unsplit, 8);
}

// Without a GPU: the scale pointer a launch passes (LaunchGemm and
// QuantizedLinear::Forward share GemmScalesArgument) is the checkpoint
// tensor, except for kernels that read k-major scales: the transposed copy
// for group scales, the checkpoint tensor for channel-wise ones, and a
// refusal where the layer has neither.
TEST(GemmLaunchArgsTest, KMajorScalesFollowTheSpecAndAreRequired) {
  auto spec = [](const char* text) { return *ParseSpecText(text); };
  LoadedKernel k_major;
  k_major.m_min = 1;
  k_major.m_max = 8;
  k_major.k_major_scales = true;
  LoadedKernel row_windows = k_major;
  row_windows.k_major_scales = false;
  const CUdeviceptr scales = 0x10000;
  const CUdeviceptr copy = 0x20000;
  const QuantSpec group = spec("weight=uint4,group=128,scale=fp16");
  const QuantSpec channel = spec("weight=uint8,group=channel,scale=fp16");
  const QuantSpec zero = spec("weight=uint4,group=128,scale=fp16,zero=int");

  absl::StatusOr<const void*> arg =
      GemmScalesArgument(group, k_major, scales, copy);
  ASSERT_TRUE(arg.ok()) << arg.status();
  EXPECT_EQ(*arg, reinterpret_cast<const void*>(copy));
  arg = GemmScalesArgument(channel, k_major, scales, 0);
  ASSERT_TRUE(arg.ok()) << arg.status();
  EXPECT_EQ(*arg, reinterpret_cast<const void*>(scales));
  arg = GemmScalesArgument(group, row_windows, scales, copy);
  ASSERT_TRUE(arg.ok()) << arg.status();
  EXPECT_EQ(*arg, reinterpret_cast<const void*>(scales));
  arg = GemmScalesArgument(zero, row_windows, scales, 0);
  ASSERT_TRUE(arg.ok()) << arg.status();
  EXPECT_EQ(*arg, reinterpret_cast<const void*>(scales));

  EXPECT_EQ(GemmScalesArgument(group, k_major, scales, 0).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(GemmScalesArgument(zero, k_major, scales, copy).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// Without a GPU: a set with a k-major kernel is refused unless the daemon
// says it planned it for a launch ABI that passes k-major scales (a daemon
// from before the request's launch_abi field would not); likewise any tile
// above the set's launch ABI.
TEST(GemmLaunchArgsTest, KMajorKernelsNeedASetPlannedForTheirAbi) {
  v1::KernelSet set;
  set.add_kernels()->set_config("tile=8x128x128,warps=1x8,stages=4,mma=wgmma");
  set.add_kernels()->set_config(
      "tile=16x256x128,warps=1x8,stages=4,mma=wgmma,layout=kmajor");
  set.set_launch_abi(kLaunchAbiOriginal);
  const absl::Status refused = CheckKernelSetLaunchAbi(set);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_NE(refused.message().find("kernel_set.kernels[1]"), std::string::npos)
      << refused;
  set.set_launch_abi(kLaunchAbiKMajorScales);
  EXPECT_TRUE(CheckKernelSetLaunchAbi(set).ok());
  set.set_launch_abi(kLaunchAbiOriginal);
  set.mutable_kernels()->RemoveLast();
  EXPECT_TRUE(CheckKernelSetLaunchAbi(set).ok());
  // Any tile above the set's ABI: a 128-token grouped one needs ABI 3.
  set.add_kernels()->set_config(
      "tile=128x128x128,warps=1x8,stages=4,mma=wgmma,order=grouped");
  set.set_launch_abi(kLaunchAbiKSplitTiles);
  const absl::Status wide = CheckKernelSetLaunchAbi(set);
  EXPECT_EQ(wide.code(), absl::StatusCode::kFailedPrecondition) << wide;
  EXPECT_NE(wide.message().find("needs launch ABI 3"), std::string::npos)
      << wide;
  set.set_launch_abi(kLaunchAbiPrefillTiles);
  EXPECT_TRUE(CheckKernelSetLaunchAbi(set).ok());
}

class GemmCorrectnessTest : public ::testing::TestWithParam<GemmCase> {
 protected:
  // NVRTC dominates a case's time and compiles independent programs
  // safely in parallel, so every case's kernels are compiled up front over
  // the host's cores (ResolveGemm memoizes; a failure is left for its case
  // to resolve again and report).
  static void SetUpTestSuite() {
    if (!NoGpuReason().empty()) return;
    const std::string arch = TestArch(TestDevice());
    std::vector<GemmCase> all(std::begin(kCases), std::end(kCases));
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
  EXPECT_LE(again->relative, tolerance);
}

INSTANTIATE_TEST_SUITE_P(Formats, GemmCorrectnessTest,
                         ::testing::ValuesIn(kCases));
INSTANTIATE_TEST_SUITE_P(Decode, GemmCorrectnessTest,
                         ::testing::ValuesIn(DecodeCases()));

}  // namespace
}  // namespace hummingd::gpu::testing
