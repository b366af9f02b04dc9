// Startup and shutdown: flags, socket permissions, one daemon per cache dir,
// SIGTERM.

#include <sys/stat.h>

#include "gtest/gtest.h"
#include "tests/integration/daemon_test_util.h"

namespace hummingd::testing {
namespace {

class LifecycleTest : public DaemonTest {};

TEST_F(LifecycleTest, SocketIsCreatedWithMode0660AndSigtermExitsCleanly) {
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  struct stat info {};
  ASSERT_EQ(stat(SocketPath().c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0660u);
  auto exit_code = daemon->Stop();
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  EXPECT_EQ(*exit_code, 0);
  const std::string log = daemon->ReadLog();
  EXPECT_NE(log.find("config compile-threads="), std::string::npos) << log;
  EXPECT_NE(log.find("phase=closed"), std::string::npos) << log;
}

TEST_F(LifecycleTest, SecondDaemonOnTheSameCacheDirFailsFast) {
  auto first = StartDaemon();
  ASSERT_NE(first, nullptr);
  CommandResult second = RunCommand(
      {DaemonProcess::BinaryPath(), "--socket", dir_.path() + "/other.sock",
       "--cache-dir", CacheDir()},
      30);
  EXPECT_NE(second.exit_code, 0);
  EXPECT_NE(second.output.find("locked by another process"), std::string::npos)
      << second.output;
  // The first one is unaffected.
  auto stub = first->Stub();
  EXPECT_GE(Counter(*stub, "uptime_seconds"), 0);
}

TEST_F(LifecycleTest, SecondDaemonOnTheSameSocketFailsFast) {
  auto first = StartDaemon();
  ASSERT_NE(first, nullptr);
  CommandResult second =
      RunCommand({DaemonProcess::BinaryPath(), "--socket", SocketPath(),
                  "--cache-dir", dir_.path() + "/other-cache"},
                 30);
  EXPECT_NE(second.exit_code, 0);
  EXPECT_NE(second.output.find("already listening"), std::string::npos)
      << second.output;
}

TEST_F(LifecycleTest, BadFlagValuesAreRefusedAtStartup) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--compile-threads", "-3"}, "--compile-threads"},
      {{"--compile-threads", "abc"}, "compile_threads"},
      {{"--max-cache-bytes", "10"}, "--max-cache-bytes"},
      {{"--socket-mode", "0999"}, "--socket-mode"},
      {{"--log-level", "loud"}, "--log-level"},
  };
  for (const auto& [flags, named] : cases) {
    std::vector<std::string> argv = {DaemonProcess::BinaryPath(), "--socket",
                                     SocketPath(), "--cache-dir", CacheDir()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    CommandResult result = RunCommand(argv, 30);
    EXPECT_NE(result.exit_code, 0) << flags[0];
    EXPECT_NE(result.output.find(named), std::string::npos)
        << flags[0] << ": " << result.output;
  }
}

TEST_F(LifecycleTest, StaleSocketFromACrashIsReplaced) {
  {
    auto daemon = StartDaemon();
    ASSERT_NE(daemon, nullptr);
    daemon->Kill();
  }
  auto daemon = StartDaemon();
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  EXPECT_EQ(Counter(*stub, "compiles"), 0);
}

}  // namespace
}  // namespace hummingd::testing
