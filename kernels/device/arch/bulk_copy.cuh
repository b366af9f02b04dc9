#pragma once

// Hopper bulk copies (cp.async.bulk, sm_90+): one instruction moves a
// contiguous run of global memory (a multiple of 16 bytes, 16-byte
// aligned) into shared memory through the TMA unit, and reports the bytes
// on a shared-memory mbarrier ("complete_tx"). Unlike per-thread cp.async,
// a bulk copy holds no L1 miss-tracking entries, so a block can keep far
// more bytes in flight — what a weight stream at HBM speed needs.
//
// mbarrier protocol used here: one arrival per phase (the thread that
// announces the phase's byte count with arrive_expect_tx); the phase
// completes once that arrival happened and every announced byte landed.
// Bytes may land before the announcement (the transaction count may go
// negative meanwhile). Waiters spin on the phase parity. Device only.

#include "arch/platform.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define HUMMINGD_HAS_BULK_COPY 1
#endif

namespace hummingd::device {

#if defined(HUMMINGD_HAS_BULK_COPY)

HUMMINGD_DEVICE void mbarrier_init(u32 s_barrier, u32 arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(s_barrier),
               "r"(arrivals)
               : "memory");
}

// Makes initialized mbarriers visible to the async proxy (the TMA unit);
// a __syncthreads must follow before other threads use them.
HUMMINGD_DEVICE void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Arrives on the barrier and adds `bytes` to the phase's expected
// transaction count.
HUMMINGD_DEVICE void mbarrier_arrive_expect_tx(u32 s_barrier, u32 bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(s_barrier),
      "r"(bytes)
      : "memory");
}

// Blocks until the phase with the given parity (0 or 1) has completed.
HUMMINGD_DEVICE void mbarrier_wait_parity(u32 s_barrier, u32 parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "HUMMINGD_MBARRIER_WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra HUMMINGD_MBARRIER_WAIT_%=;\n"
      "}" ::"r"(s_barrier),
      "r"(parity)
      : "memory");
}

// An L2 policy that evicts the copied lines first: streamed weights are
// read once per forward and should not push activations or split-K
// partials out of L2.
HUMMINGD_DEVICE u64 l2_evict_first_policy() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;"
               : "=l"(policy));
  return policy;
}

// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from
// global to shared memory, completing on s_barrier.
HUMMINGD_DEVICE void bulk_copy_global_to_shared(u32 s_dst, const void* g_src,
                                                u32 bytes, u32 s_barrier,
                                                u64 l2_policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes."
      "L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(s_dst),
      "l"(g_src), "r"(bytes), "r"(s_barrier), "l"(l2_policy)
      : "memory");
}

#endif  // HUMMINGD_HAS_BULK_COPY

}  // namespace hummingd::device
