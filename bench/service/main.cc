// hummingd_service_bench: parses flags and either serves the echo floor
// (--echo-server, spawned by the bench itself) or runs the whole bench and
// writes the markdown table and JSON.

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/service/echo_server.h"
#include "bench/service/report.h"
#include "bench/service/service_bench.h"
#include "common/flag_spelling.h"

ABSL_FLAG(std::string, hummingd, HUMMINGD_BINARY_PATH,
          "the hummingd binary to start");
ABSL_FLAG(double, duration_seconds, 3.0,
          "measured time per server and concurrency level (split over "
          "--rounds windows)");
ABSL_FLAG(double, warmup_seconds, 1.0,
          "unmeasured warm-up per server and concurrency level (split over "
          "--rounds windows)");
ABSL_FLAG(int, rounds, 4,
          "windows per level, alternating echo and hummingd so that "
          "background load hits both alike");
ABSL_FLAG(std::string, concurrency, "1,16,64",
          "comma-separated client counts (closed loop)");
ABSL_FLAG(std::string, json, "", "write the results as JSON to this path");
ABSL_FLAG(std::string, markdown, "",
          "write the markdown table to this path (it is always printed)");
ABSL_FLAG(int, compile_threads, 2, "passed to hummingd --compile-threads");
ABSL_FLAG(std::string, arch, "sm_90a", "GPU arch the kernels are built for");
ABSL_FLAG(std::string, cases, "",
          "';'-separated LABEL:FAMILY:SPEC:NxK cold-compile cases (default: a "
          "Llama-3-8B-style W4A16 set plus FP8 and MXFP4)");
ABSL_FLAG(int64_t, hit_cubin_bytes, 50 * 1024,
          "the hit kernel is the single-cubin case closest to this size");
ABSL_FLAG(std::string, commit, "unknown", "commit id for the report title");
ABSL_FLAG(std::string, echo_server, "",
          "internal: serve the echo floor on this unix socket and exit on "
          "SIGTERM");
ABSL_FLAG(int64_t, payload_bytes, 0, "internal: echo payload size");

namespace {

using hummingd::bench::BenchCase;
using hummingd::bench::BenchOptions;

bool Fail(const std::string& message) {
  std::fprintf(stderr, "hummingd_service_bench: %s\n", message.c_str());
  return false;
}

bool ParseConcurrency(const std::string& text, std::vector<int>* levels) {
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int level = 0;
    if (!absl::SimpleAtoi(part, &level) || level < 1 || level > 1024) {
      return Fail(
          absl::StrCat("--concurrency: each level must be in [1, 1024] "
                       "(got '",
                       part, "')"));
    }
    levels->push_back(level);
  }
  return !levels->empty() || Fail("--concurrency: must name a level");
}

bool ParseCases(const std::string& text, std::vector<BenchCase>* cases) {
  if (text.empty()) {
    *cases = hummingd::bench::DefaultBenchCases();
    return true;
  }
  for (absl::string_view part : absl::StrSplit(text, ';', absl::SkipEmpty())) {
    auto parsed = hummingd::bench::ParseBenchCase(std::string(part));
    if (!parsed.ok()) return Fail(std::string(parsed.status().message()));
    cases->push_back(*parsed);
  }
  return true;
}

std::string SelfPath() {
  std::string path(4096, '\0');
  const ssize_t length = readlink("/proc/self/exe", path.data(), path.size());
  path.resize(length > 0 ? static_cast<size_t>(length) : 0);
  return path;
}

bool WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream file(path, std::ios::trunc);
  file << contents;
  file.close();
  return file.good() || Fail(absl::StrCat("cannot write ", path));
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "hummingd_service_bench [--hummingd PATH] [--duration-seconds S] "
      "[--warmup-seconds S] [--concurrency 1,16,64] [--json PATH] "
      "[--markdown PATH]");
  hummingd::NormalizeFlagSpelling(argc, argv);
  absl::ParseCommandLine(argc, argv);

  if (const std::string socket = absl::GetFlag(FLAGS_echo_server);
      !socket.empty()) {
    return hummingd::bench::RunEchoServer(socket,
                                          absl::GetFlag(FLAGS_payload_bytes));
  }

  BenchOptions options;
  options.hummingd_binary = absl::GetFlag(FLAGS_hummingd);
  options.self_binary = SelfPath();
  options.commit = absl::GetFlag(FLAGS_commit);
  options.compile_threads = absl::GetFlag(FLAGS_compile_threads);
  options.gpu.arch = absl::GetFlag(FLAGS_arch);
  options.target_hit_cubin_bytes = absl::GetFlag(FLAGS_hit_cubin_bytes);
  const double duration = absl::GetFlag(FLAGS_duration_seconds);
  const double warmup = absl::GetFlag(FLAGS_warmup_seconds);
  if (!(duration > 0 && duration <= 600)) {
    Fail(absl::StrCat("--duration-seconds: must be in (0, 600] (got ", duration,
                      ")"));
    return 2;
  }
  if (!(warmup >= 0 && warmup <= 600)) {
    Fail(absl::StrCat("--warmup-seconds: must be in [0, 600] (got ", warmup,
                      ")"));
    return 2;
  }
  options.rounds = absl::GetFlag(FLAGS_rounds);
  if (options.rounds < 1 || options.rounds > 100) {
    Fail(absl::StrCat("--rounds: must be in [1, 100] (got ", options.rounds,
                      ")"));
    return 2;
  }
  options.duration = absl::Seconds(duration);
  options.warmup = absl::Seconds(warmup);
  options.concurrency.clear();
  if (!ParseConcurrency(absl::GetFlag(FLAGS_concurrency),
                        &options.concurrency) ||
      !ParseCases(absl::GetFlag(FLAGS_cases), &options.cold_cases)) {
    return 2;
  }
  if (access(options.hummingd_binary.c_str(), X_OK) != 0) {
    Fail(absl::StrCat("--hummingd: not an executable: ",
                      options.hummingd_binary));
    return 2;
  }

  absl::StatusOr<hummingd::bench::BenchReport> report =
      hummingd::bench::RunServiceBench(options);
  if (!report.ok()) {
    Fail(report.status().ToString());
    return 1;
  }
  const std::string markdown = hummingd::bench::FormatMarkdown(*report);
  std::fwrite(markdown.data(), 1, markdown.size(), stdout);
  bool written = true;
  if (const std::string path = absl::GetFlag(FLAGS_markdown); !path.empty()) {
    written = WriteFile(path, markdown) && written;
  }
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    written = WriteFile(path, hummingd::bench::FormatJson(*report)) && written;
  }
  return written ? 0 : 1;
}
