#include "bench/service/report.h"

#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace hummingd::bench {
namespace {

const char* Verdict(bool pass) { return pass ? "PASS" : "FAIL"; }

std::string CheckName(const TargetCheck& check) {
  return absl::StrCat(check.metric, " @ ", check.concurrency,
                      check.concurrency == 1 ? " client" : " clients");
}

std::string CheckText(const TargetCheck& check) {
  return absl::StrFormat("%s %.2fx %s %.1fx: %s", check.metric, check.ratio,
                         check.at_least ? ">=" : "<=", check.limit,
                         Verdict(check.pass));
}

double Ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0;
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double value) { return absl::StrFormat("%.3f", value); }

std::string LoadJson(const LoadResult& load) {
  return absl::StrCat(
      "{\"calls\": ", load.calls, ", \"errors\": ", load.errors,
      ", \"first_error\": ", JsonString(load.first_error),
      ", \"seconds\": ", JsonNumber(load.seconds),
      ", \"p50_us\": ", JsonNumber(load.p50_us),
      ", \"p99_us\": ", JsonNumber(load.p99_us),
      ", \"mean_us\": ", JsonNumber(load.mean_us),
      ", \"max_us\": ", JsonNumber(load.max_us),
      ", \"calls_per_second\": ", JsonNumber(load.calls_per_second),
      ", \"server_cpu_us_per_call\": ", JsonNumber(load.server_cpu_us_per_call),
      ", \"client_cpu_us_per_call\": ", JsonNumber(load.client_cpu_us_per_call),
      ", \"window_calls_per_second\": [",
      absl::StrJoin(load.window_calls_per_second, ", ",
                    [](std::string* out, double value) {
                      out->append(JsonNumber(value));
                    }),
      "]}");
}

std::string CaseJson(const BenchCase& bench_case) {
  return absl::StrCat(
      "{\"label\": ", JsonString(bench_case.label), ", \"family\": ",
      JsonString(bench_case.family == v1::KERNEL_FAMILY_GEMM ? "gemm"
                                                             : "dequant"),
      ", \"spec\": ", JsonString(bench_case.spec_text),
      ", \"n\": ", bench_case.n, ", \"k\": ", bench_case.k, "}");
}

std::string Title(const BenchReport& report) {
  return absl::StrCat("hummingd service bench: commit ", report.commit,
                      ", machine ", report.machine.cores, " cores, ",
                      report.machine.cpu_model);
}

}  // namespace

MachineInfo ReadMachineInfo() {
  MachineInfo info;
  info.cores = static_cast<int>(std::thread::hardware_concurrency());
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (!absl::StartsWith(line, "model name")) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    info.cpu_model = std::string(
        absl::StripAsciiWhitespace(absl::string_view(line).substr(colon + 1)));
    break;
  }
  if (info.cpu_model.empty()) info.cpu_model = "unknown CPU";
  return info;
}

std::vector<TargetCheck> EvaluateTargets(const std::vector<LoadRow>& rows) {
  std::vector<TargetCheck> checks;
  for (const LoadRow& row : rows) {
    const auto add = [&](const char* metric, double ratio, double limit,
                         bool at_least) {
      TargetCheck check;
      check.metric = metric;
      check.concurrency = row.concurrency;
      check.ratio = ratio;
      check.limit = limit;
      check.at_least = at_least;
      check.pass = at_least ? ratio >= limit : ratio <= limit;
      // A level with failed calls cannot pass, whatever its ratio.
      if (row.hummingd.errors > 0 || row.hummingd.calls == 0)
        check.pass = false;
      checks.push_back(check);
    };
    if (row.concurrency == 1) {
      add("p50", Ratio(row.hummingd.p50_us, row.echo.p50_us), 1.3, false);
    }
    if (row.concurrency == 16 || row.concurrency == 64) {
      add("throughput",
          Ratio(row.hummingd.calls_per_second, row.echo.calls_per_second), 0.8,
          true);
    }
    if (row.concurrency == 64) {
      add("p99", Ratio(row.hummingd.p99_us, row.echo.p99_us), 1.5, false);
    }
  }
  return checks;
}

std::string FormatMarkdown(const BenchReport& report) {
  std::string out = absl::StrCat("# ", Title(report), "\n\n");
  absl::StrAppendFormat(
      &out,
      "GPU profile %s (%s, %d SMs); daemon --compile-threads %d. Per "
      "server and concurrency level: %.1f s warm-up and %.1f s measured, in "
      "%d windows alternating echo and hummingd; closed loop, one channel "
      "(connection) per client, unix sockets; clients, daemon and echo "
      "server are separate processes sharing the same cores.\n\n",
      report.gpu.arch, report.gpu.device_name, report.gpu.sm_count,
      report.compile_threads, report.warmup_seconds, report.duration_seconds,
      report.rounds);

  out +=
      "## Cold compile (first GetKernels of a kernel the cache never saw)\n\n";
  out +=
      "| kernel | family | spec | N×K | first call ms | daemon compile_ms "
      "(sum / max) | compiled | M ranges | cubins | cubin bytes | repeat ms | "
      "repeat hit |\n";
  out += "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const ColdResult& cold : report.cold) {
    const BenchCase& c = cold.bench_case;
    const char* family =
        c.family == v1::KERNEL_FAMILY_GEMM ? "gemm" : "dequant";
    if (!cold.error.empty()) {
      absl::StrAppendFormat(&out,
                            "| %s | %s | `%s` | %d×%d | error: %s | | | | | | "
                            "| |\n",
                            c.label, family, c.spec_text, c.n, c.k, cold.error);
      continue;
    }
    absl::StrAppendFormat(
        &out,
        "| %s | %s | `%s` | %d×%d | %.1f | %.1f / %.1f | %d | %d | %d | %d | "
        "%.2f | %s |\n",
        c.label, family, c.spec_text, c.n, c.k, cold.first_call_ms,
        cold.compile_ms_sum, cold.compile_ms_max, cold.compiled, cold.kernels,
        cold.cubins, cold.cubin_bytes, cold.second_call_ms,
        cold.second_call_hit ? "yes" : "NO");
  }

  const HitKernel& hit = report.hit;
  absl::StrAppendFormat(
      &out,
      "\n## Cache hit vs. echo floor\n\nHit kernel: %s (`%s`, %d×%d), one "
      "cubin of %d bytes; GetKernelsResponse %d bytes serialized (request %d "
      "bytes). Echo: EchoResponse %d bytes (payload %d), EchoRequest padded "
      "to %d bytes.\n\n",
      hit.bench_case.label, hit.bench_case.spec_text, hit.bench_case.n,
      hit.bench_case.k, hit.cubin_bytes, hit.response_bytes, hit.request_bytes,
      hit.echo_response_bytes, hit.echo_payload_bytes, hit.request_bytes);
  out +=
      "| clients | echo p50 µs | echo p99 µs | echo calls/s | hummingd p50 µs "
      "| hummingd p99 µs | hummingd calls/s | p50 × | p99 × | calls/s × | "
      "targets |\n";
  out += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const LoadRow& row : report.rows) {
    std::vector<std::string> texts;
    for (const TargetCheck& check : report.checks) {
      if (check.concurrency == row.concurrency)
        texts.push_back(CheckText(check));
    }
    if (row.echo.errors + row.hummingd.errors > 0) {
      texts.push_back(absl::StrCat("errors: echo ", row.echo.errors,
                                   ", hummingd ", row.hummingd.errors));
    }
    absl::StrAppendFormat(
        &out,
        "| %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f "
        "| %s |\n",
        row.concurrency, row.echo.p50_us, row.echo.p99_us,
        row.echo.calls_per_second, row.hummingd.p50_us, row.hummingd.p99_us,
        row.hummingd.calls_per_second,
        Ratio(row.hummingd.p50_us, row.echo.p50_us),
        Ratio(row.hummingd.p99_us, row.echo.p99_us),
        Ratio(row.hummingd.calls_per_second, row.echo.calls_per_second),
        texts.empty() ? "—" : absl::StrJoin(texts, "; "));
  }

  out +=
      "\n## CPU per call (µs; server from /proc/PID/stat, client from "
      "getrusage)\n\n| clients | echo server | hummingd server | client vs "
      "echo | client vs hummingd |\n|---:|---:|---:|---:|---:|\n";
  for (const LoadRow& row : report.rows) {
    absl::StrAppendFormat(
        &out, "| %d | %.1f | %.1f | %.1f | %.1f |\n", row.concurrency,
        row.echo.server_cpu_us_per_call, row.hummingd.server_cpu_us_per_call,
        row.echo.client_cpu_us_per_call, row.hummingd.client_cpu_us_per_call);
  }

  out += "\n## Targets\n\n| check | hummingd / echo | limit | result |\n";
  out += "|---|---:|---:|---|\n";
  bool all_pass = !report.checks.empty();
  for (const TargetCheck& check : report.checks) {
    all_pass = all_pass && check.pass;
    absl::StrAppendFormat(
        &out, "| %s | %.2f× | %s %.1f× | %s |\n", CheckName(check), check.ratio,
        check.at_least ? "≥" : "≤", check.limit, Verdict(check.pass));
  }
  absl::StrAppendFormat(&out, "\nOverall: **%s**\n", Verdict(all_pass));
  for (const std::string& note : report.notes) {
    absl::StrAppend(&out, "\nNote: ", note, "\n");
  }
  return out;
}

std::string FormatJson(const BenchReport& report) {
  std::vector<std::string> cold;
  for (const ColdResult& c : report.cold) {
    cold.push_back(absl::StrCat(
        "    {\"case\": ", CaseJson(c.bench_case),
        ", \"error\": ", JsonString(c.error),
        ", \"first_call_ms\": ", JsonNumber(c.first_call_ms),
        ", \"compile_ms_sum\": ", JsonNumber(c.compile_ms_sum),
        ", \"compile_ms_max\": ", JsonNumber(c.compile_ms_max),
        ", \"compiled\": ", c.compiled, ", \"kernels\": ", c.kernels,
        ", \"cubins\": ", c.cubins, ", \"cubin_bytes\": ", c.cubin_bytes,
        ", \"second_call_ms\": ", JsonNumber(c.second_call_ms),
        ", \"second_call_hit\": ", c.second_call_hit ? "true" : "false",
        ", \"request_bytes\": ", c.request_bytes,
        ", \"response_bytes\": ", c.response_bytes, "}"));
  }
  std::vector<std::string> rows;
  for (const LoadRow& row : report.rows) {
    rows.push_back(
        absl::StrCat("    {\"concurrency\": ", row.concurrency,
                     ",\n     \"echo\": ", LoadJson(row.echo),
                     ",\n     \"hummingd\": ", LoadJson(row.hummingd), "}"));
  }
  std::vector<std::string> checks;
  bool all_pass = !report.checks.empty();
  for (const TargetCheck& check : report.checks) {
    all_pass = all_pass && check.pass;
    checks.push_back(absl::StrCat(
        "    {\"metric\": ", JsonString(check.metric), ", \"concurrency\": ",
        check.concurrency, ", \"ratio\": ", JsonNumber(check.ratio),
        ", \"limit\": ", JsonNumber(check.limit),
        ", \"comparison\": ", JsonString(check.at_least ? ">=" : "<="),
        ", \"pass\": ", check.pass ? "true" : "false", "}"));
  }
  std::vector<std::string> counters;
  for (const auto& [name, value] : report.daemon_counters) {
    counters.push_back(absl::StrCat(JsonString(name), ": ", value));
  }
  std::vector<std::string> notes;
  for (const std::string& note : report.notes)
    notes.push_back(JsonString(note));

  const HitKernel& hit = report.hit;
  return absl::StrCat(
      "{\n  \"title\": ", JsonString(Title(report)),
      ",\n  \"commit\": ", JsonString(report.commit),
      ",\n  \"machine\": {\"cores\": ", report.machine.cores,
      ", \"cpu_model\": ", JsonString(report.machine.cpu_model), "}",
      ",\n  \"gpu_profile\": {\"arch\": ", JsonString(report.gpu.arch),
      ", \"sm_count\": ", report.gpu.sm_count,
      ", \"max_shared_memory_per_block_optin\": ",
      report.gpu.max_shared_memory_per_block_optin,
      ", \"device_name\": ", JsonString(report.gpu.device_name), "}",
      ",\n  \"compile_threads\": ", report.compile_threads,
      ",\n  \"warmup_seconds\": ", JsonNumber(report.warmup_seconds),
      ",\n  \"duration_seconds\": ", JsonNumber(report.duration_seconds),
      ",\n  \"rounds\": ", report.rounds, ",\n  \"cold_compile\": [\n",
      absl::StrJoin(cold, ",\n"), "\n  ]",
      ",\n  \"hit_kernel\": {\"case\": ", CaseJson(hit.bench_case),
      ", \"cubin_bytes\": ", hit.cubin_bytes,
      ", \"request_bytes\": ", hit.request_bytes,
      ", \"response_bytes\": ", hit.response_bytes,
      ", \"echo_payload_bytes\": ", hit.echo_payload_bytes,
      ", \"echo_response_bytes\": ", hit.echo_response_bytes, "}",
      ",\n  \"load\": [\n", absl::StrJoin(rows, ",\n"), "\n  ]",
      ",\n  \"targets\": [\n", absl::StrJoin(checks, ",\n"), "\n  ]",
      ",\n  \"all_targets_pass\": ", all_pass ? "true" : "false",
      ",\n  \"daemon_counters\": {", absl::StrJoin(counters, ", "), "}",
      ",\n  \"notes\": [", absl::StrJoin(notes, ", "), "]\n}\n");
}

}  // namespace hummingd::bench
