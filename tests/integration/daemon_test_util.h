#pragma once

// Shared fixture for the black-box suites: a temp dir holding the socket and
// the cache, requests for real layer shapes, and counter helpers.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hummingd/v1/kernel_service.grpc.pb.h"
#include "tests/support/daemon_process.h"

namespace hummingd::testing {

inline constexpr char kW4Spec[] =
    "weight=uint4,group=128,scale=fp16,zero=none,act=fp16,out=fp16";

v1::GetKernelsRequest DequantRequest(int64_t n, int64_t k,
                                     const std::string& spec = kW4Spec,
                                     const std::string& arch = "sm_90a");

class DaemonTest : public ::testing::Test {
 protected:
  std::string SocketPath() const { return dir_.path() + "/d.sock"; }
  std::string CacheDir() const { return dir_.path() + "/cache"; }

  // Starts a daemon on this test's socket and cache dir; fails the test on
  // error.
  std::unique_ptr<DaemonProcess> StartDaemon(
      std::vector<std::string> extra_flags = {});

  // GetKernels with a deadline; returns the status and fills `response`.
  grpc::Status Get(v1::KernelService::Stub& stub,
                   const v1::GetKernelsRequest& request,
                   v1::GetKernelsResponse* response, int timeout_seconds = 120);

  // A whole Prefetch stream with a deadline: every progress message, then
  // the stream's status.
  struct PrefetchResult {
    std::vector<v1::PrefetchProgress> progress;
    grpc::Status status;
  };
  PrefetchResult Prefetch(v1::KernelService::Stub& stub,
                          const v1::PrefetchRequest& request,
                          int timeout_seconds = 120);

  int64_t Counter(v1::KernelService::Stub& stub, const std::string& name);

  // The real hummingctl against this test's socket: `hummingctl --socket
  // <SocketPath()> args...`.
  CommandResult Ctl(const std::vector<std::string>& args) const;

  TempDir dir_;
};

}  // namespace hummingd::testing
