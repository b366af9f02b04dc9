#include "tests/support/daemon_process.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "ctl/daemon_channel.h"

namespace hummingd::testing {
namespace {

bool WaitForExit(pid_t pid, int timeout_seconds, int* status) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t done = waitpid(pid, status, WNOHANG);
    if (done == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

TempDir::TempDir() {
  auto dir = ScratchDir::Create();
  if (!dir.ok()) std::abort();  // no writable temp dir: nothing can be tested
  dir_ = *std::move(dir);
}

std::string DaemonProcess::BinaryPath() { return HUMMINGD_BINARY_PATH; }

absl::StatusOr<std::unique_ptr<DaemonProcess>> DaemonProcess::Start(
    const DaemonOptions& options, int timeout_seconds) {
  std::unique_ptr<DaemonProcess> daemon(new DaemonProcess());
  daemon->options_ = options;
  daemon->log_path_ = absl::StrCat(options.cache_dir, ".log");
  std::vector<std::string> argv = {BinaryPath(), "--socket",
                                   options.socket_path, "--cache-dir",
                                   options.cache_dir};
  argv.insert(argv.end(), options.extra_flags.begin(),
              options.extra_flags.end());
  auto process = ChildProcess::Spawn(argv, daemon->log_path_);
  if (!process.ok()) return process.status();
  daemon->process_ = *std::move(process);
  absl::Status serving = daemon->process_->WaitUntilServing(
      options.socket_path, absl::Seconds(timeout_seconds));
  if (!serving.ok()) return serving;
  return daemon;
}

DaemonProcess::~DaemonProcess() = default;  // ChildProcess kills a live child

absl::StatusOr<int> DaemonProcess::Stop(int timeout_seconds) {
  if (process_ == nullptr) return absl::FailedPreconditionError("not running");
  absl::StatusOr<int> exit_code =
      process_->Stop(absl::Seconds(timeout_seconds));
  process_.reset();
  return exit_code;
}

void DaemonProcess::Kill() { process_.reset(); }

std::string DaemonProcess::ReadLog() const {
  std::ifstream file(log_path_);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

std::shared_ptr<grpc::Channel> DaemonProcess::Channel() const {
  return OpenDaemonChannel(options_.socket_path);
}

std::unique_ptr<v1::KernelService::Stub> DaemonProcess::Stub() const {
  return v1::KernelService::NewStub(Channel());
}

CommandResult RunCommand(const std::vector<std::string>& argv_in,
                         int timeout_seconds) {
  CommandResult result;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return result;
  std::vector<std::string> args = argv_in;
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  char buffer[4096];
  ssize_t got;
  while ((got = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) {
    result.output.append(buffer, static_cast<size_t>(got));
  }
  close(pipe_fds[0]);
  int status = 0;
  if (!WaitForExit(pid, timeout_seconds, &status)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    result.exit_code = -1;
    return result;
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

absl::StatusOr<std::map<std::string, int64_t>> FetchStats(
    v1::KernelService::Stub& stub) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  v1::StatsResponse response;
  grpc::Status status = stub.Stats(&context, v1::StatsRequest(), &response);
  if (!status.ok()) {
    return absl::UnavailableError(status.error_message());
  }
  return std::map<std::string, int64_t>(response.counters().begin(),
                                        response.counters().end());
}

}  // namespace hummingd::testing
