#include "bench/kernel/gemm_bench_report.h"

#include <cmath>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hummingd::bench {
namespace {

// JSON has no NaN or inf: a value that is not finite is written as null.
std::string JsonNumber(double value, int digits = 3) {
  return std::isfinite(value) ? absl::StrFormat("%.*f", digits, value) : "null";
}

std::string JsonScientific(double value) {
  return std::isfinite(value) ? absl::StrFormat("%.3e", value) : "null";
}

}  // namespace

std::optional<bool> MeetsTarget(const GemmBenchRow& row) {
  if (!row.target_us) return std::nullopt;
  return row.us <= *row.target_us;
}

std::string FormatMarkdownTable(const std::vector<GemmBenchRow>& rows) {
  std::string table =
      "| spec | N×K | M | hummingd µs | roofline µs | of roofline | target µs "
      "| meets | cuBLAS dense µs | vs cuBLAS | rel err |\n"
      "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|\n";
  for (const GemmBenchRow& row : rows) {
    const std::optional<bool> meets = MeetsTarget(row);
    const NumericsResult& numerics = row.numerics;
    std::string error = absl::StrFormat("%.1e", numerics.relative_error);
    if (numerics.non_finite > 0) {
      error = absl::StrCat(error, ", ", numerics.non_finite, " NaN/inf");
    }
    if (!numerics.ok) error = absl::StrCat("**FAIL** ", error);
    absl::StrAppendFormat(
        &table,
        "| `%s` | %d×%d | %d | %.1f | %.1f | %.0f%% | %s | %s | %s | %s "
        "| %s |\n",
        row.spec, row.n, row.k, row.m, row.us, row.roofline_us,
        100.0 * row.roofline_us / row.us,
        row.target_us ? absl::StrFormat("%.1f", *row.target_us) : "-",
        meets ? (*meets ? "yes" : "no") : "-",
        row.cublas_us > 0 ? absl::StrFormat("%.1f", row.cublas_us) : "-",
        row.cublas_us > 0 ? absl::StrFormat("%.2f×", row.cublas_us / row.us)
                          : "-",
        error);
  }
  return table;
}

std::string FormatJson(const std::vector<GemmBenchRow>& rows) {
  std::string json = "[\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const GemmBenchRow& row = rows[i];
    const std::optional<bool> meets = MeetsTarget(row);
    // A spec that parsed is printable ASCII, for which CEscape's escapes
    // (\" \\ \t) are also JSON's.
    absl::StrAppend(
        &json, "  {\"spec\": \"", absl::CEscape(row.spec), "\", \"n\": ", row.n,
        ", \"k\": ", row.k, ", \"m\": ", row.m,
        ", \"us\": ", JsonNumber(row.us),
        ", \"roofline_us\": ", JsonNumber(row.roofline_us),
        ", \"fraction\": ", JsonNumber(row.roofline_us / row.us, 4),
        ", \"cublas_us\": ",
        row.cublas_us > 0 ? JsonNumber(row.cublas_us) : "null",
        ", \"target_us\": ",
        row.target_us ? JsonNumber(*row.target_us) : "null",
        ", \"meets\": ", meets ? (*meets ? "true" : "false") : "null",
        ", \"rel_err\": ", JsonScientific(row.numerics.relative_error),
        ", \"non_finite\": ", row.numerics.non_finite,
        ", \"numerics_ok\": ", row.numerics.ok ? "true" : "false",
        ", \"gpu\": ",
        row.gpu.empty() ? "null"
                        : absl::StrCat("\"", absl::CEscape(row.gpu), "\""),
        ", \"copy_tbps\": ", JsonNumber(row.copy_tbps),
        ", \"tensor_tflops\": ", JsonNumber(row.tensor_tflops, 1),
        ", \"kernel\": ",
        row.kernel.empty()
            ? "null"
            : absl::StrCat("\"", absl::CEscape(row.kernel), "\""),
        ", \"splits\": ", row.splits, "}", i + 1 < rows.size() ? ",\n" : "\n");
  }
  return json + "]\n";
}

std::string FormatSummary(const std::vector<GemmBenchRow>& rows) {
  int64_t failures = 0, checked = 0, met = 0;
  for (const GemmBenchRow& row : rows) {
    failures += !row.numerics.ok;
    const std::optional<bool> meets = MeetsTarget(row);
    checked += meets.has_value();
    met += meets.value_or(false);
  }
  return absl::StrFormat("%d cases, %d numerics failures, %d/%d targets met",
                         rows.size(), failures, met, checked);
}

}  // namespace hummingd::bench
