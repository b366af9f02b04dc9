#pragma once

// The closed-loop load generator shared by the echo floor and hummingd: N
// client threads, each on its own channel (own connection), each issuing its
// next call as soon as the previous one returns.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"

namespace hummingd::bench {

// One call on a client's own stub; an error is counted, not fatal.
using CallFunction = std::function<absl::Status()>;
// Runs on the client's thread before the clock starts: opens the channel,
// waits for the connection and returns the call to repeat.
using ClientFactory = std::function<absl::StatusOr<CallFunction>(int client)>;

struct LoadOptions {
  int concurrency = 1;
  absl::Duration warmup = absl::Seconds(1);
  absl::Duration duration = absl::Seconds(3);
  // Safety bound per client, whatever the duration.
  int64_t max_calls_per_client = 50'000'000;
  // CPU seconds used so far by the server process; sampled at both ends of
  // the window when set.
  std::function<double()> server_cpu_seconds;
};

// One measured window.
struct LoadSample {
  std::vector<double> latencies_us;  // calls completed OK inside the window
  int64_t errors = 0;                // failed calls inside the window
  std::string first_error;
  double seconds = 0;             // length of the window
  double server_cpu_seconds = 0;  // spent by the server inside the window
  double client_cpu_seconds = 0;  // spent by this (client) process
};

// Several windows of one server at one concurrency, pooled.
struct LoadResult {
  int concurrency = 0;
  int64_t calls = 0;
  int64_t errors = 0;
  std::string first_error;
  double seconds = 0;
  double p50_us = 0;
  double p99_us = 0;
  double mean_us = 0;
  double max_us = 0;
  double calls_per_second = 0;
  // CPU time per completed call (µs), from /proc and getrusage; shows which
  // side of the socket a difference comes from.
  double server_cpu_us_per_call = 0;
  double client_cpu_us_per_call = 0;
  // Per window, to show how steady the machine was.
  std::vector<double> window_calls_per_second;
};

// Warm-up first (calls run, nothing recorded), then the measured window:
// every call that completes inside it counts for both latency and throughput.
// Fails only when a client cannot be set up.
absl::StatusOr<LoadSample> RunClosedLoop(const ClientFactory& factory,
                                         const LoadOptions& options);

LoadResult Summarize(int concurrency, const std::vector<LoadSample>& samples);

// CPU seconds (user + system) used so far by this process.
double SelfCpuSeconds();

// A unix-socket channel with message limits large enough for kernel sets.
// `client_id` goes into a channel argument so that channels of different
// clients never share a subchannel (connection).
std::shared_ptr<grpc::Channel> OpenClientChannel(const std::string& socket_path,
                                                 int client_id);

// Waits until `channel` is connected.
absl::Status WaitConnected(grpc::Channel& channel, absl::Duration timeout);

}  // namespace hummingd::bench
