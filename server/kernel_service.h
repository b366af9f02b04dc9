#pragma once

// The gRPC face of the daemon: parse -> validate -> resolve. Handlers never
// compile. GetKernels is a raw callback method: hits (the hot path) are
// answered inline from serialized bytes; misses finish from the compile
// pool's completion, so no gRPC thread ever blocks on a compile. The other
// methods are ordinary sync handlers.

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

class KernelServiceImpl final
    : public v1::KernelService::WithRawCallbackMethod_GetKernels<
          v1::KernelService::Service> {
 public:
  KernelServiceImpl(KernelStore* store, CompileScheduler* scheduler,
                    KernelResolver* resolver, const RequestLimits& limits,
                    int64_t memo_bytes);

  grpc::ServerUnaryReactor* GetKernels(grpc::CallbackServerContext* context,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  grpc::Status Prefetch(
      grpc::ServerContext* context, const v1::PrefetchRequest* request,
      grpc::ServerWriter<v1::PrefetchProgress>* writer) override;
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
  bool ServeFromMemo(const std::string& memo_key, grpc::ByteBuffer* response);
  // Assembles the set once every compile is done, serializes it into
  // `response`, memoizes it and returns the call's status.
  grpc::Status CompleteGetKernels(const PendingKernelSet& pending,
                                  bool metadata_only,
                                  const std::string& memo_key,
                                  grpc::ByteBuffer* response);

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
