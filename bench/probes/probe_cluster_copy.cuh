#pragma once

// What the multicast probes share (multicast_probe.cu,
// whole_k_multicast_probe.cu): bulk copies into shared memory that complete
// on an mbarrier, plain or multicast to the blocks of a cluster, and the
// cluster's rank, barrier and remote mbarrier arrival. Probe-only: the
// kernels' own bulk copies are arch/bulk_copy.cuh's.

#include <cuda_runtime.h>

#include <cstdint>

__device__ inline uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Copies `bytes` to this block's shared memory, completing on `bar`.
__device__ inline void bulk_copy(uint32_t dst, const void* src, uint32_t bytes,
                                 uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
      "[%0], [%1], %2, [%3];" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}

// Writes `bytes` at the same offset of every block in `mask` and completes
// that many bytes on each one's mbarrier at offset `bar`.
__device__ inline void bulk_copy_multicast(uint32_t dst, const void* src,
                                           uint32_t bytes, uint32_t bar,
                                           uint16_t mask) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes."
      "multicast::cluster [%0], [%1], %2, [%3], %4;" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar), "h"(mask)
      : "memory");
}

// Arrives on the mbarrier at the same offset in cluster block `rank`.
__device__ inline void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(bar), "r"(rank));
  asm volatile(
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(
          remote)
      : "memory");
}

__device__ inline void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;" ::
          : "memory");
}

__device__ inline uint32_t cluster_rank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}
