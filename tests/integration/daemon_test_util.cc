#include "tests/integration/daemon_test_util.h"

#include <chrono>

namespace hummingd::testing {

v1::GetKernelsRequest DequantRequest(int64_t n, int64_t k,
                                     const std::string& spec,
                                     const std::string& arch) {
  v1::GetKernelsRequest request;
  v1::KernelRequest* kernel = request.mutable_request();
  kernel->set_family(v1::KERNEL_FAMILY_DEQUANT);
  kernel->mutable_spec()->set_text(spec);
  kernel->mutable_shape()->set_n(n);
  kernel->mutable_shape()->set_k(k);
  kernel->mutable_gpu()->set_arch(arch);
  return request;
}

CommandResult DaemonTest::Ctl(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {HUMMINGCTL_BINARY_PATH, "--socket",
                                   SocketPath()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

std::unique_ptr<DaemonProcess> DaemonTest::StartDaemon(
    std::vector<std::string> extra_flags) {
  DaemonOptions options;
  options.socket_path = SocketPath();
  options.cache_dir = CacheDir();
  options.extra_flags = std::move(extra_flags);
  auto daemon = DaemonProcess::Start(options);
  EXPECT_TRUE(daemon.ok()) << daemon.status();
  return daemon.ok() ? *std::move(daemon) : nullptr;
}

DaemonTest::PrefetchResult DaemonTest::Prefetch(
    v1::KernelService::Stub& stub, const v1::PrefetchRequest& request,
    int timeout_seconds) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(timeout_seconds));
  auto reader = stub.Prefetch(&context, request);
  PrefetchResult result;
  v1::PrefetchProgress progress;
  while (reader->Read(&progress)) result.progress.push_back(progress);
  result.status = reader->Finish();
  return result;
}

grpc::Status DaemonTest::Get(v1::KernelService::Stub& stub,
                             const v1::GetKernelsRequest& request,
                             v1::GetKernelsResponse* response,
                             int timeout_seconds) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(timeout_seconds));
  return stub.GetKernels(&context, request, response);
}

int64_t DaemonTest::Counter(v1::KernelService::Stub& stub,
                            const std::string& name) {
  auto stats = FetchStats(stub);
  EXPECT_TRUE(stats.ok()) << stats.status();
  if (!stats.ok()) return -1;
  auto it = stats->find(name);
  EXPECT_NE(it, stats->end()) << "no counter named " << name;
  return it == stats->end() ? -1 : it->second;
}

}  // namespace hummingd::testing
