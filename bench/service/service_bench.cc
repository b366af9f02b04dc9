#include "bench/service/service_bench.h"

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "bench/service/client_load.h"
#include "bench/service/echo.grpc.pb.h"
#include "bench/service/echo_server.h"
#include "ctl/child_process.h"
#include "hummingd/v1/kernel_service.grpc.pb.h"

namespace hummingd::bench {
namespace {

constexpr absl::Duration kStartupTimeout = absl::Seconds(60);
constexpr absl::Duration kConnectTimeout = absl::Seconds(20);
constexpr auto kCallDeadline = std::chrono::seconds(30);

std::chrono::system_clock::time_point CallDeadline() {
  return std::chrono::system_clock::now() + kCallDeadline;
}

absl::Status FromGrpc(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

// The single-cubin set closest to the target size; else the smallest set.
std::optional<size_t> PickHitCase(const std::vector<ColdResult>& cold,
                                  int64_t target_bytes) {
  std::optional<size_t> best;
  const auto distance = [&](size_t i) {
    return std::llabs(cold[i].cubin_bytes - target_bytes);
  };
  for (size_t i = 0; i < cold.size(); ++i) {
    if (!cold[i].error.empty() || cold[i].cubins != 1) continue;
    if (!best || distance(i) < distance(*best)) best = i;
  }
  if (best) return best;
  for (size_t i = 0; i < cold.size(); ++i) {
    if (!cold[i].error.empty() || cold[i].cubins < 1) continue;
    if (!best || cold[i].response_bytes < cold[*best].response_bytes) best = i;
  }
  return best;
}

ClientFactory HummingdClients(const std::string& socket_path, int id_base,
                              const v1::GetKernelsRequest& request) {
  return [=](int client) -> absl::StatusOr<CallFunction> {
    auto channel = OpenClientChannel(socket_path, id_base + client);
    if (absl::Status connected = WaitConnected(*channel, kConnectTimeout);
        !connected.ok()) {
      return connected;
    }
    std::shared_ptr<v1::KernelService::Stub> stub =
        v1::KernelService::NewStub(channel);
    return CallFunction([stub, request] {
      grpc::ClientContext context;
      context.set_deadline(CallDeadline());
      v1::GetKernelsResponse response;
      const grpc::Status status =
          stub->GetKernels(&context, request, &response);
      if (!status.ok()) return FromGrpc(status);
      // Cheap sanity check that this was the full hit, cubin included.
      if (response.kernel_set().kernels_size() == 0 ||
          response.kernel_set().kernels(0).cubin().empty()) {
        return absl::DataLossError("hit response without a cubin");
      }
      return absl::OkStatus();
    });
  };
}

ClientFactory EchoClients(const std::string& socket_path, int id_base,
                          int64_t request_bytes, int64_t payload_bytes) {
  EchoRequest request;
  request.set_padding(
      std::string(EchoPayloadForMessageBytes(request_bytes), 'r'));
  return [=](int client) -> absl::StatusOr<CallFunction> {
    auto channel = OpenClientChannel(socket_path, id_base + client);
    if (absl::Status connected = WaitConnected(*channel, kConnectTimeout);
        !connected.ok()) {
      return connected;
    }
    std::shared_ptr<EchoService::Stub> stub = EchoService::NewStub(channel);
    return CallFunction([stub, request, payload_bytes] {
      grpc::ClientContext context;
      context.set_deadline(CallDeadline());
      EchoResponse response;
      const grpc::Status status = stub->Echo(&context, request, &response);
      if (!status.ok()) return FromGrpc(status);
      if (static_cast<int64_t>(response.payload().size()) != payload_bytes) {
        return absl::DataLossError("echo payload of the wrong size");
      }
      return absl::OkStatus();
    });
  };
}

// Both servers at one concurrency, in `rounds` alternating windows (echo
// first in even rounds, hummingd first in odd ones) so that background load
// on the machine lands on both alike.
absl::StatusOr<LoadRow> MeasureLevel(const BenchOptions& options, int level,
                                     const std::string& echo_socket,
                                     const ChildProcess& echo_process,
                                     const std::string& daemon_socket,
                                     const ChildProcess& daemon_process,
                                     const HitKernel& hit,
                                     const v1::GetKernelsRequest& request) {
  LoadOptions load;
  load.concurrency = options.concurrency[level];
  load.warmup = options.warmup / options.rounds;
  load.duration = options.duration / options.rounds;
  std::vector<LoadSample> echo_samples;
  std::vector<LoadSample> daemon_samples;
  for (int round = 0; round < options.rounds; ++round) {
    // Distinct ids per window and server: no connection is ever reused.
    const int id_base = (level * 128 + round) * 4096;
    const ClientFactory echo = EchoClients(
        echo_socket, id_base, hit.request_bytes, hit.echo_payload_bytes);
    const ClientFactory daemon =
        HummingdClients(daemon_socket, id_base + 2048, request);
    for (int turn = 0; turn < 2; ++turn) {
      const bool echo_turn = (turn == 0) == (round % 2 == 0);
      const ChildProcess& server = echo_turn ? echo_process : daemon_process;
      load.server_cpu_seconds = [&server] { return server.CpuSeconds(); };
      absl::StatusOr<LoadSample> sample =
          RunClosedLoop(echo_turn ? echo : daemon, load);
      if (!sample.ok()) return sample.status();
      (echo_turn ? echo_samples : daemon_samples).push_back(*std::move(sample));
    }
  }
  LoadRow row;
  row.concurrency = load.concurrency;
  row.echo = Summarize(load.concurrency, echo_samples);
  row.hummingd = Summarize(load.concurrency, daemon_samples);
  return row;
}

absl::StatusOr<std::map<std::string, int64_t>> FetchCounters(
    const std::string& socket_path) {
  auto stub = v1::KernelService::NewStub(OpenClientChannel(socket_path, -1));
  grpc::ClientContext context;
  context.set_deadline(CallDeadline());
  v1::StatsResponse response;
  const grpc::Status status =
      stub->Stats(&context, v1::StatsRequest(), &response);
  if (!status.ok()) return FromGrpc(status);
  return std::map<std::string, int64_t>(response.counters().begin(),
                                        response.counters().end());
}

}  // namespace

absl::StatusOr<BenchReport> RunServiceBench(const BenchOptions& options) {
  BenchReport report;
  report.commit = options.commit;
  report.machine = ReadMachineInfo();
  report.gpu = options.gpu;
  report.compile_threads = options.compile_threads;
  report.warmup_seconds = absl::ToDoubleSeconds(options.warmup);
  report.duration_seconds = absl::ToDoubleSeconds(options.duration);
  report.rounds = options.rounds;

  auto scratch_or = ScratchDir::Create();
  if (!scratch_or.ok()) return scratch_or.status();
  const std::unique_ptr<ScratchDir> scratch = *std::move(scratch_or);
  const std::string daemon_socket = scratch->path() + "/hummingd.sock";
  const std::string echo_socket = scratch->path() + "/echo.sock";

  std::vector<std::string> daemon_argv = {
      options.hummingd_binary,
      "--socket",
      daemon_socket,
      "--cache-dir",
      scratch->path() + "/cache",
      "--compile-threads",
      absl::StrCat(options.compile_threads)};
  daemon_argv.insert(daemon_argv.end(), options.extra_daemon_flags.begin(),
                     options.extra_daemon_flags.end());
  auto daemon_or =
      ChildProcess::Spawn(daemon_argv, scratch->path() + "/hummingd.log");
  if (!daemon_or.ok()) return daemon_or.status();
  const std::unique_ptr<ChildProcess> daemon = *std::move(daemon_or);
  if (absl::Status up =
          daemon->WaitUntilServing(daemon_socket, kStartupTimeout);
      !up.ok()) {
    return up;
  }

  {
    auto stub =
        v1::KernelService::NewStub(OpenClientChannel(daemon_socket, -1));
    for (const BenchCase& bench_case : options.cold_cases) {
      report.cold.push_back(MeasureColdCompile(*stub, bench_case, options.gpu));
    }
  }
  const std::optional<size_t> hit_index =
      PickHitCase(report.cold, options.target_hit_cubin_bytes);
  if (!hit_index) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no case compiled, so there is no kernel to measure hits on; first "
        "error: ",
        report.cold.empty() ? "no cases" : report.cold[0].error,
        "\ndaemon log tail:\n", daemon->LogTail(3000)));
  }
  const ColdResult& hit_cold = report.cold[*hit_index];
  HitKernel& hit = report.hit;
  hit.bench_case = hit_cold.bench_case;
  hit.cubin_bytes = hit_cold.cubin_bytes;
  hit.request_bytes = hit_cold.request_bytes;
  hit.response_bytes = hit_cold.response_bytes;
  hit.echo_payload_bytes = EchoPayloadForMessageBytes(hit.response_bytes);
  EchoResponse sized;
  sized.set_payload(std::string(hit.echo_payload_bytes, 'p'));
  hit.echo_response_bytes = static_cast<int64_t>(sized.ByteSizeLong());
  if (std::llabs(hit.cubin_bytes - options.target_hit_cubin_bytes) * 4 >
      options.target_hit_cubin_bytes) {
    report.notes.push_back(
        absl::StrCat("no case has a cubin within 25% of the ",
                     options.target_hit_cubin_bytes,
                     "-byte target; the closest single-cubin "
                     "set (",
                     hit.cubin_bytes,
                     " bytes) is used and the echo payload "
                     "matches it"));
  }
  if (hit_cold.cubins != 1) {
    report.notes.push_back(absl::StrCat(
        "no case produced a single-cubin set; the hit kernel carries ",
        hit_cold.cubins, " cubins"));
  }

  auto echo_or = ChildProcess::Spawn(
      {options.self_binary, "--echo-server", echo_socket, "--payload-bytes",
       absl::StrCat(hit.echo_payload_bytes)},
      scratch->path() + "/echo.log");
  if (!echo_or.ok()) return echo_or.status();
  const std::unique_ptr<ChildProcess> echo = *std::move(echo_or);
  if (absl::Status up = echo->WaitUntilServing(echo_socket, kStartupTimeout);
      !up.ok()) {
    return up;
  }

  for (size_t level = 0; level < options.concurrency.size(); ++level) {
    auto row =
        MeasureLevel(options, static_cast<int>(level), echo_socket, *echo,
                     daemon_socket, *daemon, hit, hit_cold.request);
    if (!row.ok()) return row.status();
    report.rows.push_back(*row);
  }
  report.checks = EvaluateTargets(report.rows);

  if (auto counters = FetchCounters(daemon_socket); counters.ok()) {
    report.daemon_counters = *counters;
  } else {
    report.notes.push_back(
        absl::StrCat("Stats failed: ", counters.status().ToString()));
  }
  if (auto code = echo->Stop(absl::Seconds(10)); !code.ok() || *code != 0) {
    report.notes.push_back("echo server did not stop cleanly");
  }
  if (auto code = daemon->Stop(absl::Seconds(30)); !code.ok() || *code != 0) {
    report.notes.push_back(absl::StrCat(
        "hummingd did not stop cleanly: ",
        code.ok() ? absl::StrCat("exit ", *code) : code.status().ToString()));
  }
  return report;
}

}  // namespace hummingd::bench
