#pragma once

// A gRPC server run as a child process (hummingd for black-box tests, the
// daemon and the echo server for the service bench), so that client work and
// server work never share an address space. The child dies with its parent
// (PR_SET_PDEATHSIG).

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace hummingd {

class ChildProcess {
 public:
  // fork + execv(argv[0], argv); stdout and stderr go to `log_path`.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Spawn(
      const std::vector<std::string>& argv, const std::string& log_path);
  ~ChildProcess();  // SIGKILL if still running

  // Polls the standard gRPC health service on `socket_path` until SERVING;
  // fails early (with the log tail) when the child exits.
  absl::Status WaitUntilServing(const std::string& socket_path,
                                absl::Duration timeout);

  // SIGTERM, then SIGKILL after `timeout`; returns the exit status.
  absl::StatusOr<int> Stop(absl::Duration timeout);

  // User + system CPU seconds the child has used so far (/proc/PID/stat).
  double CpuSeconds() const;

  std::string LogTail(size_t max_bytes) const;
  pid_t pid() const { return pid_; }

 private:
  ChildProcess() = default;
  // Reaps without blocking; true when the child has exited.
  bool Reaped(int* status);

  pid_t pid_ = -1;
  std::string name_;
  std::string log_path_;
};

// A fresh directory under $TMPDIR (or /tmp), removed with its contents by
// the destructor.
class ScratchDir {
 public:
  static absl::StatusOr<std::unique_ptr<ScratchDir>> Create();
  ~ScratchDir();
  const std::string& path() const { return path_; }

 private:
  ScratchDir() = default;
  std::string path_;
};

}  // namespace hummingd
