// A full disk: writes stop with a clear error, kernels are still served,
// nothing committed is lost, and the daemon never dies. Needs root (a small
// tmpfs is mounted for the cache); skipped, visibly, elsewhere.

#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "tests/integration/daemon_test_util.h"

namespace hummingd::testing {
namespace {

class DiskFullTest : public DaemonTest {
 protected:
  void SetUp() override {
    mount_point_ = dir_.path() + "/fs";
    std::filesystem::create_directories(mount_point_);
    if (mount("tmpfs", mount_point_.c_str(), "tmpfs", 0, "size=8m") != 0) {
      skip_reason_ = std::string("cannot mount a tmpfs: ") + strerror(errno);
      return;
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) umount2(mount_point_.c_str(), MNT_DETACH);
  }
  std::string CacheOnSmallDisk() const { return mount_point_ + "/cache"; }

  std::unique_ptr<DaemonProcess> Start() {
    DaemonOptions options;
    options.socket_path = SocketPath();
    options.cache_dir = CacheOnSmallDisk();
    options.extra_flags = {"--min-free-disk-bytes", "1048576"};
    auto daemon = DaemonProcess::Start(options);
    EXPECT_TRUE(daemon.ok()) << daemon.status();
    return daemon.ok() ? *std::move(daemon) : nullptr;
  }

  // Leaves `keep_bytes` free on the small file system.
  void FillDisk(int64_t keep_bytes) {
    struct statvfs fs {};
    ASSERT_EQ(statvfs(mount_point_.c_str(), &fs), 0);
    const int64_t free_bytes = static_cast<int64_t>(fs.f_bavail) * fs.f_frsize;
    std::ofstream filler(mount_point_ + "/filler", std::ios::binary);
    const std::string block(64 << 10, 'x');
    for (int64_t left = free_bytes - keep_bytes; left > 0;
         left -= static_cast<int64_t>(block.size())) {
      filler.write(block.data(), std::min<int64_t>(left, block.size()));
    }
  }

  std::string mount_point_;
  bool mounted_ = false;
  std::string skip_reason_;
};

TEST_F(DiskFullTest, KernelsAreServedAndNothingCommittedIsLost) {
  if (!mounted_) GTEST_SKIP() << "skipped: " << skip_reason_;
  const auto kept = DequantRequest(512, 512);
  const auto late = DequantRequest(1024, 512);
  std::string kept_cubin;
  {
    auto daemon = Start();
    ASSERT_NE(daemon, nullptr);
    auto stub = daemon->Stub();
    v1::GetKernelsResponse response;
    ASSERT_TRUE(Get(*stub, kept, &response).ok());
    kept_cubin = response.kernel_set().kernels(0).cubin();

    FillDisk(/*keep_bytes=*/512 << 10);
    v1::GetKernelsResponse full;
    grpc::Status status = Get(*stub, late, &full);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(full.kernel_set().kernels(0).outcome(),
              v1::CACHE_OUTCOME_COMPILED);
    EXPECT_GT(full.kernel_set().kernels(0).cubin().size(), 1000u);
    EXPECT_GE(Counter(*stub, "store_write_errors"), 1);
    EXPECT_NE(daemon->ReadLog().find("disk full"), std::string::npos);

    // Asked again: served without a second compile; the committed kernel is
    // still a hit.
    v1::GetKernelsResponse again;
    ASSERT_TRUE(Get(*stub, late, &again).ok());
    EXPECT_EQ(Counter(*stub, "compiles"), 2);
    v1::GetKernelsResponse old;
    ASSERT_TRUE(Get(*stub, kept, &old).ok());
    EXPECT_EQ(old.kernel_set().kernels(0).cubin(), kept_cubin);

    auto exit_code = daemon->Stop();
    ASSERT_TRUE(exit_code.ok()) << exit_code.status();
    EXPECT_EQ(*exit_code, 0);
  }
  std::filesystem::remove(mount_point_ + "/filler");
  auto daemon = Start();
  ASSERT_NE(daemon, nullptr);
  auto stub = daemon->Stub();
  v1::GetKernelsResponse response;
  ASSERT_TRUE(Get(*stub, kept, &response).ok());
  EXPECT_EQ(response.kernel_set().kernels(0).outcome(), v1::CACHE_OUTCOME_HIT);
  EXPECT_EQ(response.kernel_set().kernels(0).cubin(), kept_cubin);
  EXPECT_EQ(Counter(*stub, "corrupt_dropped"), 0);
}

}  // namespace
}  // namespace hummingd::testing
