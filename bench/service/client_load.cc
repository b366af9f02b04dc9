#include "bench/service/client_load.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace hummingd::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Nearest-rank percentile of sorted data, q in (0, 1].
double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(q * sorted.size()));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

struct ClientRecord {
  std::vector<double> latencies_us;
  int64_t errors = 0;
  std::string first_error;
  absl::Status setup = absl::OkStatus();
};

}  // namespace

std::shared_ptr<grpc::Channel> OpenClientChannel(const std::string& socket_path,
                                                 int client_id) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(256 << 20);
  arguments.SetMaxSendMessageSize(256 << 20);
  arguments.SetInt("hummingd.client_id", client_id);
  return grpc::CreateCustomChannel(absl::StrCat("unix:", socket_path),
                                   grpc::InsecureChannelCredentials(),
                                   arguments);
}

absl::Status WaitConnected(grpc::Channel& channel, absl::Duration timeout) {
  if (channel.WaitForConnected(absl::ToChronoTime(absl::Now() + timeout))) {
    return absl::OkStatus();
  }
  return absl::UnavailableError(absl::StrCat("channel not connected after ",
                                             absl::FormatDuration(timeout)));
}

double SelfCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

absl::StatusOr<LoadSample> RunClosedLoop(const ClientFactory& factory,
                                         const LoadOptions& options) {
  const int clients = options.concurrency;
  if (clients < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("concurrency: must be >= 1 (got ", clients, ")"));
  }
  std::vector<ClientRecord> records(clients);
  std::latch ready(clients + 1);
  std::atomic<bool> abort{false};
  // Written by the main thread before `go` is released.
  Clock::time_point window_start;
  Clock::time_point window_end;
  std::latch go(1);

  std::vector<std::thread> threads;
  threads.reserve(clients);
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] {
      ClientRecord& record = records[i];
      absl::StatusOr<CallFunction> call = factory(i);
      if (!call.ok()) {
        record.setup = call.status();
        abort.store(true);
      }
      ready.count_down();
      go.wait();
      if (abort.load()) return;
      // Big enough for a few seconds of fast calls without regrowing.
      record.latencies_us.reserve(1 << 16);
      for (int64_t n = 0; n < options.max_calls_per_client; ++n) {
        const Clock::time_point start = Clock::now();
        if (start >= window_end) break;
        const absl::Status status = (*call)();
        const Clock::time_point stop = Clock::now();
        if (stop < window_start || stop > window_end) continue;
        if (!status.ok()) {
          if (record.errors++ == 0) record.first_error = status.ToString();
          continue;
        }
        record.latencies_us.push_back(
            std::chrono::duration<double, std::micro>(stop - start).count());
      }
    });
  }
  ready.arrive_and_wait();
  window_start = Clock::now() + absl::ToChronoNanoseconds(options.warmup);
  window_end = window_start + absl::ToChronoNanoseconds(options.duration);
  go.count_down();
  double server_cpu_start = 0;
  double client_cpu_start = 0;
  std::this_thread::sleep_until(window_start);
  if (options.server_cpu_seconds)
    server_cpu_start = options.server_cpu_seconds();
  client_cpu_start = SelfCpuSeconds();
  std::this_thread::sleep_until(window_end);
  const double client_cpu = SelfCpuSeconds() - client_cpu_start;
  const double server_cpu =
      options.server_cpu_seconds
          ? options.server_cpu_seconds() - server_cpu_start
          : 0;
  for (std::thread& thread : threads) thread.join();

  LoadSample sample;
  sample.seconds = absl::ToDoubleSeconds(options.duration);
  sample.server_cpu_seconds = server_cpu;
  sample.client_cpu_seconds = client_cpu;
  for (ClientRecord& record : records) {
    if (!record.setup.ok()) return record.setup;
    sample.latencies_us.insert(sample.latencies_us.end(),
                               record.latencies_us.begin(),
                               record.latencies_us.end());
    sample.errors += record.errors;
    if (sample.first_error.empty()) sample.first_error = record.first_error;
  }
  return sample;
}

LoadResult Summarize(int concurrency, const std::vector<LoadSample>& samples) {
  LoadResult result;
  result.concurrency = concurrency;
  std::vector<double> all;
  double server_cpu = 0;
  double client_cpu = 0;
  for (const LoadSample& sample : samples) {
    server_cpu += sample.server_cpu_seconds;
    client_cpu += sample.client_cpu_seconds;
    all.insert(all.end(), sample.latencies_us.begin(),
               sample.latencies_us.end());
    result.errors += sample.errors;
    result.seconds += sample.seconds;
    if (result.first_error.empty()) result.first_error = sample.first_error;
    result.window_calls_per_second.push_back(
        sample.seconds > 0 ? sample.latencies_us.size() / sample.seconds : 0);
  }
  std::sort(all.begin(), all.end());
  result.calls = static_cast<int64_t>(all.size());
  result.p50_us = Percentile(all, 0.50);
  result.p99_us = Percentile(all, 0.99);
  result.max_us = all.empty() ? 0 : all.back();
  double sum = 0;
  for (const double value : all) sum += value;
  result.mean_us = all.empty() ? 0 : sum / all.size();
  result.calls_per_second =
      result.seconds > 0 ? result.calls / result.seconds : 0;
  if (result.calls > 0) {
    result.server_cpu_us_per_call = server_cpu * 1e6 / result.calls;
    result.client_cpu_us_per_call = client_cpu * 1e6 / result.calls;
  }
  return result;
}

}  // namespace hummingd::bench
