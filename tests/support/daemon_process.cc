#include "tests/support/daemon_process.h"

#include <fcntl.h>
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
#include "grpc/health/v1/health.grpc.pb.h"

namespace hummingd::testing {
namespace {

bool WaitForExit(pid_t pid, int timeout_seconds, int* status) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::seconds(timeout_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t done = waitpid(pid, status, WNOHANG);
    if (done == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

bool IsServing(const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(500));
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status =
      stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  return status.ok() &&
         response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

std::string Tail(const std::string& text, size_t bytes) {
  return text.size() <= bytes ? text : text.substr(text.size() - bytes);
}

}  // namespace

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(base && *base ? base : "/tmp", "/hummingd-test-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    std::abort();  // a test machine without a writable /tmp cannot test
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string DaemonProcess::BinaryPath() { return HUMMINGD_BINARY_PATH; }

absl::StatusOr<std::unique_ptr<DaemonProcess>> DaemonProcess::Start(
    const DaemonOptions& options, int timeout_seconds) {
  std::unique_ptr<DaemonProcess> daemon(new DaemonProcess());
  daemon->options_ = options;
  daemon->log_path_ = absl::StrCat(options.cache_dir, ".log");

  std::vector<std::string> args = {BinaryPath(), "--socket",
                                   options.socket_path, "--cache-dir",
                                   options.cache_dir};
  args.insert(args.end(), options.extra_flags.begin(),
              options.extra_flags.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  const int log_fd = open(daemon->log_path_.c_str(),
                          O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return absl::InternalError(absl::StrCat("cannot open ", daemon->log_path_));
  }
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log_fd);
  daemon->pid_ = pid;

  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::seconds(timeout_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      daemon->pid_ = -1;
      return absl::FailedPreconditionError(absl::StrCat(
          "hummingd exited during startup (status ", status,
          "); log:\n", Tail(daemon->ReadLog(), 4000)));
    }
    // A fresh channel per probe: a channel whose first connect failed (socket
    // not there yet) would sit in reconnect backoff for seconds.
    if (IsServing(daemon->Channel())) return daemon;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  daemon->Kill();
  return absl::DeadlineExceededError(absl::StrCat(
      "hummingd did not become healthy; log:\n", Tail(daemon->ReadLog(), 4000)));
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) Kill();
}

absl::StatusOr<int> DaemonProcess::Stop(int timeout_seconds) {
  if (pid_ <= 0) return absl::FailedPreconditionError("not running");
  kill(pid_, SIGTERM);
  int status = 0;
  if (!WaitForExit(pid_, timeout_seconds, &status)) {
    Kill();
    return absl::DeadlineExceededError("hummingd ignored SIGTERM");
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void DaemonProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

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
