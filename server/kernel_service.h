#pragma once

// The gRPC face of the daemon: parse -> validate -> resolve. Handlers never
// compile; they wait on the compile pool with the request's deadline.

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "cache/kernel_store.h"
#include "hummingd/v1/kernel_service.grpc.pb.h"
#include "server/compile_scheduler.h"
#include "server/kernel_resolver.h"
#include "server/kernel_set_memo.h"
#include "server/proto_convert.h"

namespace hummingd {

class KernelServiceImpl final : public v1::KernelService::Service {
 public:
  KernelServiceImpl(KernelStore* store, CompileScheduler* scheduler,
                    KernelResolver* resolver, const RequestLimits& limits,
                    int64_t memo_bytes);

  grpc::Status GetKernels(grpc::ServerContext* context,
                          const v1::GetKernelsRequest* request,
                          v1::GetKernelsResponse* response) override;
  grpc::Status Prefetch(grpc::ServerContext* context,
                        const v1::PrefetchRequest* request,
                        grpc::ServerWriter<v1::PrefetchProgress>* writer)
      override;
  grpc::Status Stats(grpc::ServerContext* context,
                     const v1::StatsRequest* request,
                     v1::StatsResponse* response) override;
  grpc::Status ListEntries(grpc::ServerContext* context,
                           const v1::ListEntriesRequest* request,
                           v1::ListEntriesResponse* response) override;
  grpc::Status Evict(grpc::ServerContext* context,
                     const v1::EvictRequest* request,
                     v1::EvictResponse* response) override;

 private:
  // Serves a repeated request from the memo when every artifact it names is
  // still stored; false when the slow path must run.
  bool ServeFromMemo(const std::string& memo_key,
                     v1::GetKernelsResponse* response);
  void Memoize(const std::string& memo_key,
               const v1::GetKernelsResponse& response);

  KernelStore* const store_;
  CompileScheduler* const scheduler_;
  KernelResolver* const resolver_;
  const RequestLimits limits_;
  KernelSetMemo memo_;
  const absl::Time started_ = absl::Now();
  std::atomic<int64_t> memo_hits_{0};
  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> invalid_requests_{0};
  std::atomic<int64_t> failed_requests_{0};
  std::atomic<int64_t> prefetch_items_{0};
};

}  // namespace hummingd
