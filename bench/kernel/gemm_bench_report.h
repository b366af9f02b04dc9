#pragma once

// hummingd_gemm_bench's results: one row per (spec, N×K, M), rendered as the
// markdown table, as JSON, and as a one-line summary.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/kernel/gemm_bench_check.h"

namespace hummingd::bench {

struct GemmBenchRow {
  std::string spec;
  int64_t n = 0;
  int64_t k = 0;
  int64_t m = 0;
  double us = 0;           // median per launch
  double roofline_us = 0;  // max(bytes / copy rate, flops / tensor rate)
  double cublas_us = 0;    // dense cuBLAS of the same shape; 0: not measured
  std::optional<double> target_us;  // TargetUs
  NumericsResult numerics;
  std::string kernel;    // the tile config text of the kernel that ran
  int64_t splits = 1;    // its split-K factor
  std::string gpu;       // the driver's name of the GPU it ran on
  double copy_tbps = 0;  // the roofline's ceilings (gpu_ceilings.h)
  double tensor_tflops = 0;
};

// Whether the case meets its target; nullopt when it has none.
std::optional<bool> MeetsTarget(const GemmBenchRow& row);

// Columns: spec, N×K, M, hummingd µs, roofline µs, of roofline, target µs,
// meets, cuBLAS dense µs, vs cuBLAS, rel err ("FAIL …" when the numerics
// check failed).
std::string FormatMarkdownTable(const std::vector<GemmBenchRow>& rows);

// An array of one object per row, one row per line: spec, n, k, m, us,
// roofline_us, fraction (roofline / us), cublas_us, target_us, meets,
// rel_err, non_finite, numerics_ok, gpu, copy_tbps, tensor_tflops, kernel
// (tile config text), splits; null where a value does not exist. The keys
// keep this order: readers match spec first and kernel, splits last.
std::string FormatJson(const std::vector<GemmBenchRow>& rows);

// "N cases, F numerics failures, T/C targets met".
std::string FormatSummary(const std::vector<GemmBenchRow>& rows);

}  // namespace hummingd::bench
