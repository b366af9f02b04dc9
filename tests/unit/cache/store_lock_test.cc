// A second process on a held cache directory must fail fast with a clear
// FAILED_PRECONDITION: this is what a second hummingd on the same node sees.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cache/kernel_store.h"
#include "cache_test_util.h"
#include "gtest/gtest.h"

namespace hummingd {
namespace {

// Runs the probe binary in a forked child on `directory`; returns its stdout.
std::string RunProbe(const std::string& directory) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    ADD_FAILURE() << "pipe failed";
    return "";
  }
  const pid_t child = fork();
  if (child == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    // exec: the child must not inherit this process's RocksDB state (its
    // in-process lock table), only the OS-level view of the directory.
    execl(HUMMINGD_CACHE_LOCK_PROBE, HUMMINGD_CACHE_LOCK_PROBE,
          directory.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string output;
  char buffer[512];
  ssize_t got = 0;
  while ((got = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) {
    output.append(buffer, static_cast<size_t>(got));
  }
  close(pipe_fds[0]);
  int wait_status = 0;
  EXPECT_EQ(waitpid(child, &wait_status, 0), child);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0)
      << "probe exited abnormally, status " << wait_status;
  return output;
}

TEST(StoreLockTest, ChildProcessGetsFailedPreconditionWhileHeld) {
  cache_test::TempDir dir;
  RocksStoreOptions options;
  options.directory = dir.Sub("cache");
  {
    auto store = OpenRocksStore(options);
    ASSERT_TRUE(store.ok()) << store.status();
    const std::string output = RunProbe(options.directory);
    EXPECT_EQ(
        output,
        absl::StrCat(
            "code=", static_cast<int>(absl::StatusCode::kFailedPrecondition),
            " message=cache dir ", options.directory,
            " is locked by another process (is another hummingd "
            "running on it?)\n"));
  }
  // Released on close: the same probe now opens the directory.
  EXPECT_EQ(RunProbe(options.directory), "code=0 message=\n");
}

}  // namespace
}  // namespace hummingd
