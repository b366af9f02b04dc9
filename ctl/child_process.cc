#include "ctl/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace hummingd {
namespace {

bool IsServing(const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(500));
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status =
      stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  return status.ok() &&
         response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(
    const std::vector<std::string>& argv, const std::string& log_path) {
  if (argv.empty())
    return absl::InvalidArgumentError("argv: must not be empty");
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->name_ = argv[0];
  child->log_path_ = log_path;

  std::vector<std::string> args = argv;
  std::vector<char*> raw;
  for (std::string& arg : args) raw.push_back(arg.data());
  raw.push_back(nullptr);

  const int log_fd =
      open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return absl::InternalError(absl::StrCat("cannot open log ", log_path));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return absl::InternalError("fork failed");
  }
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    execv(raw[0], raw.data());
    _exit(127);
  }
  close(log_fd);
  child->pid_ = pid;
  return child;
}

ChildProcess::~ChildProcess() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
}

bool ChildProcess::Reaped(int* status) {
  if (pid_ <= 0) return true;
  if (waitpid(pid_, status, WNOHANG) != pid_) return false;
  pid_ = -1;
  return true;
}

absl::Status ChildProcess::WaitUntilServing(const std::string& socket_path,
                                            absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    int status = 0;
    if (Reaped(&status)) {
      return absl::FailedPreconditionError(
          absl::StrCat(name_, " exited during startup (wait status ", status,
                       "); log tail:\n", LogTail(4000)));
    }
    // A fresh channel per probe: one whose first connect failed (socket not
    // there yet) would sit in reconnect backoff for seconds.
    if (IsServing(grpc::CreateChannel(absl::StrCat("unix:", socket_path),
                                      grpc::InsecureChannelCredentials()))) {
      return absl::OkStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      name_, " not SERVING on ", socket_path, " after ",
      absl::FormatDuration(timeout), "; log tail:\n", LogTail(4000)));
}

absl::StatusOr<int> ChildProcess::Stop(absl::Duration timeout) {
  if (pid_ <= 0) return absl::FailedPreconditionError("child not running");
  kill(pid_, SIGTERM);
  const absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  while (absl::Now() < deadline) {
    if (Reaped(&status)) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return absl::DeadlineExceededError(absl::StrCat(
      name_, " ignored SIGTERM for ", absl::FormatDuration(timeout)));
}

double ChildProcess::CpuSeconds() const {
  std::ifstream file(absl::StrCat("/proc/", pid_, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(file)),
                   std::istreambuf_iterator<char>());
  // Fields after the parenthesized command name (which may hold spaces):
  // state is field 3, utime 14, stime 15.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int index = 3; index <= 15 && fields >> field; ++index) {
    if (index == 14 || index == 15)
      ticks += std::strtod(field.c_str(), nullptr);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::string ChildProcess::LogTail(size_t max_bytes) const {
  std::ifstream file(log_path_);
  std::stringstream contents;
  contents << file.rdbuf();
  const std::string text = contents.str();
  return text.size() <= max_bytes ? text : text.substr(text.size() - max_bytes);
}

absl::StatusOr<std::unique_ptr<ScratchDir>> ScratchDir::Create() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(base && *base ? base : "/tmp", "/hummingd-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp failed for ", pattern));
  }
  std::unique_ptr<ScratchDir> dir(new ScratchDir());
  dir->path_ = pattern;
  return dir;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace hummingd
