#pragma once

// EmbeddedSource: the daemon's pipeline in-process (validation, resolver,
// single-flight compile pool, RocksDB cache), for workers with no daemon on
// the node. Its kernel sets equal the daemon's for the same request, apart
// from the per-call outcome and compile time fields.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cache/kernel_store.h"
#include "client/cpp/src/kernel_source.h"
#include "server/compile_scheduler.h"
#include "server/kernel_resolver.h"
#include "server/proto_convert.h"

namespace hummingd::client {

struct EmbeddedSourceOptions {
  std::string cache_dir;    // resolved already (no "" here); created if missing
  int compile_threads = 0;  // 0 = cores
  int timeout_seconds = 600;
};

class EmbeddedSource : public KernelSource {
 public:
  // FAILED_PRECONDITION when another process holds the cache dir.
  static absl::StatusOr<std::unique_ptr<EmbeddedSource>> Open(
      const EmbeddedSourceOptions& options);
  // Finishes running compiles, then closes RocksDB.
  ~EmbeddedSource() override;

  absl::StatusOr<v1::KernelSet> Resolve(
      const v1::KernelRequest& request) override;
  absl::Status Prefetch(const std::vector<v1::KernelRequest>& requests,
                        const PrefetchCallback& progress) override;
  std::string Describe() const override;

 private:
  explicit EmbeddedSource(const EmbeddedSourceOptions& options)
      : options_(options) {}

  const EmbeddedSourceOptions options_;
  // The daemon's defaults; the daemon's --max-weight-elements has no
  // embedded counterpart.
  const RequestLimits limits_;
  // Construction order store -> scheduler -> resolver; destruction reverse.
  std::unique_ptr<KernelStore> store_;
  std::unique_ptr<CompileScheduler> scheduler_;
  std::unique_ptr<KernelResolver> resolver_;
};

}  // namespace hummingd::client
