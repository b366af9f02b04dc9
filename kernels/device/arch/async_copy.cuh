#pragma once

// 16-byte global -> shared copies for multi-stage pipelines. sm_80+ uses
// cp.async (the copy overlaps compute; groups are committed and waited on);
// sm_75 has no cp.async, so the copy is a synchronous vector load + store
// and the group operations are no-ops (the pipeline's barriers then order
// everything). A copy whose `valid` is false writes 16 zero bytes; its
// source address must still point into the buffer (callers clamp it).
// Device only.

#include "arch/global_memory.cuh"
#include "arch/platform.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define HUMMINGD_HAS_CP_ASYNC 1
#endif

namespace hummingd::device {

#if defined(__CUDA_ARCH__)

HUMMINGD_DEVICE void copy_16_async(u32 s_dst, const void* g_src, bool valid) {
#if defined(HUMMINGD_HAS_CP_ASYNC)
  const u32 src_bytes = valid ? 16u : 0u;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s_dst),
               "l"(g_src), "r"(src_bytes)
               : "memory");
#else
  u32 r_data[4] = {0u, 0u, 0u, 0u};
  if (valid) load_global_nc_v4(static_cast<const u32*>(g_src), r_data);
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(s_dst),
               "r"(r_data[0]), "r"(r_data[1]), "r"(r_data[2]), "r"(r_data[3])
               : "memory");
#endif
}

// copy_16_async with the source size given directly (16, or 0 to write
// 16 zero bytes).
HUMMINGD_DEVICE void copy_16_async_bytes(u32 s_dst, const void* g_src,
                                         u32 src_bytes) {
#if defined(HUMMINGD_HAS_CP_ASYNC)
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s_dst),
               "l"(g_src), "r"(src_bytes)
               : "memory");
#else
  copy_16_async(s_dst, g_src, src_bytes != 0u);
#endif
}

// Programmatic dependent launch (sm_90+; no-ops before, and when the
// launch did not ask for it). grid_dependency_wait blocks until the
// previous kernel on the stream has completed and its writes are visible;
// grid_dependents_launch lets the next kernel be scheduled early.
HUMMINGD_DEVICE void grid_dependency_wait() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

HUMMINGD_DEVICE void grid_dependents_launch() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

HUMMINGD_DEVICE void async_copy_commit() {
#if defined(HUMMINGD_HAS_CP_ASYNC)
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until at most kPending committed groups are still in flight.
template <int kPending>
HUMMINGD_DEVICE void async_copy_wait() {
#if defined(HUMMINGD_HAS_CP_ASYNC)
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
#endif
}

HUMMINGD_DEVICE u32 load_shared_u32(u32 s_address) {
  u32 value;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(value) : "r"(s_address));
  return value;
}

HUMMINGD_DEVICE void load_shared_v4_at(u32 s_address, u32* r_dst) {
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r_dst[0]), "=r"(r_dst[1]), "=r"(r_dst[2]), "=r"(r_dst[3])
               : "r"(s_address));
}

#endif  // __CUDA_ARCH__

}  // namespace hummingd::device
