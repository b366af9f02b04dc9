#pragma once

// Starts the real `hummingd` binary on a temp socket and cache dir for
// black-box tests, and stops it by SIGTERM or SIGKILL.

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctl/child_process.h"
#include "grpcpp/channel.h"
#include "hummingd/v1/kernel_service.grpc.pb.h"

namespace hummingd::testing {

// A fresh directory under $TMPDIR (or /tmp), removed by the destructor.
class TempDir {
 public:
  TempDir();
  const std::string& path() const { return dir_->path(); }

 private:
  std::unique_ptr<ScratchDir> dir_;
};

struct DaemonOptions {
  std::string socket_path;
  std::string cache_dir;
  std::vector<std::string> extra_flags;
};

class DaemonProcess {
 public:
  // Path of the binary under test (set by CMake).
  static std::string BinaryPath();

  // Spawns the daemon and waits (up to `timeout_seconds`) until its health
  // service says SERVING. On failure the daemon's stderr tail is in the
  // message.
  static absl::StatusOr<std::unique_ptr<DaemonProcess>> Start(
      const DaemonOptions& options, int timeout_seconds = 30);
  ~DaemonProcess();  // SIGKILL if still running

  // SIGTERM and wait; returns the exit code.
  absl::StatusOr<int> Stop(int timeout_seconds = 30);
  // SIGKILL and reap.
  void Kill();

  pid_t pid() const { return process_ ? process_->pid() : -1; }
  const std::string& log_path() const { return log_path_; }
  std::string ReadLog() const;
  std::shared_ptr<grpc::Channel> Channel() const;
  std::unique_ptr<v1::KernelService::Stub> Stub() const;

 private:
  DaemonProcess() = default;

  DaemonOptions options_;
  std::unique_ptr<ChildProcess> process_;  // null once stopped or killed
  std::string log_path_;
};

// Runs `binary args...` to completion; captures stdout+stderr.
struct CommandResult {
  int exit_code = -1;
  std::string output;
};
CommandResult RunCommand(const std::vector<std::string>& argv,
                         int timeout_seconds = 300);

// The daemon's counters as a map.
absl::StatusOr<std::map<std::string, int64_t>> FetchStats(
    v1::KernelService::Stub& stub);

}  // namespace hummingd::testing
