#pragma once

// Host/device portability for every device header. The numeric building
// blocks are `__host__ __device__` so that host unit tests can run them
// exhaustively; this header is the only place that knows which compiler is
// reading the code. No host or CUDA headers: NVRTC compiles it as is.

#if defined(__CUDACC__)
#define HUMMINGD_HD __host__ __device__ __forceinline__
#define HUMMINGD_DEVICE __device__ __forceinline__
#else
#define HUMMINGD_HD inline
#define HUMMINGD_DEVICE inline
#endif

// Full unrolling matters on the device: register arrays indexed by a loop
// counter stay in registers only when every index is a constant. The host
// build does not care and GCC would warn about the CUDA spelling.
#if defined(__CUDACC__)
#define HUMMINGD_UNROLL _Pragma("unroll")
#else
#define HUMMINGD_UNROLL
#endif

// Timeline marks: where a skeleton's phases begin, for
// bench/probes/timeline_probe.cu, which defines HUMMINGD_TIMELINE and a
// device function hummingd_timeline_mark(thread, point) before including a
// skeleton. Generated stubs never define it, so the marks compile to
// nothing in every served kernel.
#if defined(HUMMINGD_TIMELINE)
#define HUMMINGD_TIMELINE_MARK(thread, point) \
  hummingd_timeline_mark((thread), (point))
#else
#define HUMMINGD_TIMELINE_MARK(thread, point) ((void)0)
#endif

namespace hummingd::device {

// Own fixed-width names: <cstdint> is a host header NVRTC does not ship.
using u8 = unsigned char;
using u16 = unsigned short;
using u32 = unsigned int;
using u64 = unsigned long long;
using i32 = int;
using i64 = long long;

static_assert(sizeof(u8) == 1 && sizeof(u16) == 2 && sizeof(u32) == 4 &&
                  sizeof(u64) == 8 && sizeof(i64) == 8 && sizeof(float) == 4,
              "fixed-width typedefs do not match this compiler");

#if defined(__CUDA_ARCH__)
// The value, hidden from the optimizer so that it stays in a register:
// nvcc otherwise recomputes a value it finds cheap (a shared-memory base
// from %cgactaid) at every use inside a loop.
HUMMINGD_DEVICE u32 opaque_register(u32 value) {
  asm volatile("" : "+r"(value));
  return value;
}

// A value every lane of the warp holds, made known to the compiler as
// warp-uniform (lane 0's, broadcast; every lane of the warp must call it,
// converged): derived from the thread index it
// would otherwise stay in per-lane registers, and every wgmma descriptor
// built from it would move to uniform registers (R2UR) at each use.
HUMMINGD_DEVICE int warp_uniform(int value) {
  return __shfl_sync(0xFFFFFFFFu, value, 0);
}
#endif

HUMMINGD_HD u32 float_as_bits(float value) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(value);
#else
  return __builtin_bit_cast(u32, value);
#endif
}

HUMMINGD_HD float bits_as_float(u32 bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  return __builtin_bit_cast(float, bits);
#endif
}

}  // namespace hummingd::device
