#pragma once

// The CUDA driver API, loaded lazily: libcuda.so.1 is dlopen()ed on first use
// so that a process linking this library still starts on a host without an
// NVIDIA driver. The toolkit's cuda.h supplies types only; nothing links
// libcuda or its stub.
//
// cuda.h maps many names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2);
// the table below is written with the plain names, so both the member type
// and the symbol looked up follow the header's own mapping.

#include <cuda.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hummingd::gpu {

#define HUMMINGD_CUDA_DRIVER_FUNCTIONS(X)        \
  X(cuInit)                                      \
  X(cuDriverGetVersion)                          \
  X(cuDeviceGetCount)                            \
  X(cuDeviceGet)                                 \
  X(cuDeviceGetName)                             \
  X(cuDeviceGetAttribute)                        \
  X(cuDevicePrimaryCtxRetain)                    \
  X(cuDevicePrimaryCtxRelease)                   \
  X(cuCtxGetCurrent)                             \
  X(cuCtxSetCurrent)                             \
  X(cuCtxPushCurrent)                            \
  X(cuCtxPopCurrent)                             \
  X(cuCtxGetDevice)                              \
  X(cuCtxSynchronize)                            \
  X(cuModuleLoadData)                            \
  X(cuModuleGetFunction)                         \
  X(cuFuncSetAttribute)                          \
  X(cuFuncGetAttribute)                          \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
  X(cuLaunchKernelEx)                            \
  X(cuMemAlloc)                                  \
  X(cuMemFree)                                   \
  X(cuMemGetInfo)                                \
  X(cuMemcpyHtoD)                                \
  X(cuMemcpyHtoDAsync)                           \
  X(cuMemcpyDtoH)                                \
  X(cuMemcpyDtoDAsync)                           \
  X(cuMemsetD8)                                  \
  X(cuMemsetD8Async)                             \
  X(cuStreamCreate)                              \
  X(cuStreamDestroy)                             \
  X(cuStreamSynchronize)                         \
  X(cuStreamBeginCapture)                        \
  X(cuStreamEndCapture)                          \
  X(cuGraphInstantiate)                          \
  X(cuGraphLaunch)                               \
  X(cuGraphExecDestroy)                          \
  X(cuGraphDestroy)                              \
  X(cuEventCreate)                               \
  X(cuEventRecord)                               \
  X(cuEventSynchronize)                          \
  X(cuEventElapsedTime)                          \
  X(cuEventDestroy)                              \
  X(cuGetErrorName)                              \
  X(cuGetErrorString)

// CUDA 12+ context-independent loading; null when the driver predates it
// (the loader then falls back to per-context modules).
#define HUMMINGD_CUDA_DRIVER_OPTIONAL_FUNCTIONS(X) \
  X(cuLibraryLoadData)                             \
  X(cuLibraryGetKernel)                            \
  X(cuKernelGetFunction)                           \
  X(cuKernelSetAttribute)

struct CudaDriverApi {
#define HUMMINGD_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  HUMMINGD_CUDA_DRIVER_FUNCTIONS(HUMMINGD_CUDA_DRIVER_MEMBER)
  HUMMINGD_CUDA_DRIVER_OPTIONAL_FUNCTIONS(HUMMINGD_CUDA_DRIVER_MEMBER)
#undef HUMMINGD_CUDA_DRIVER_MEMBER
  int driver_version = 0;  // cuDriverGetVersion: 13000 = CUDA 13.0

  bool HasLibraryApi() const {
    return cuLibraryLoadData != nullptr && cuLibraryGetKernel != nullptr &&
           cuKernelGetFunction != nullptr && cuKernelSetAttribute != nullptr;
  }
};

// The driver table, loaded and cuInit()ed once per process (thread-safe).
// FAILED_PRECONDITION when libcuda.so.1 is missing, lacks a required entry
// point, or cuInit fails (no device, driver/toolkit mismatch).
absl::StatusOr<const CudaDriverApi*> CudaDriver();

// The one conversion of a driver error into a Status: FAILED_PRECONDITION
// for "no driver / no usable GPU" results, INTERNAL otherwise; the message
// is "<what>: <CUDA_ERROR_NAME> (<description>)".
absl::Status CudaStatus(CUresult result, absl::string_view what);

// Shorthand for call sites: OkStatus on CUDA_SUCCESS, else CudaStatus.
inline absl::Status CudaCheck(CUresult result, absl::string_view what) {
  return result == CUDA_SUCCESS ? absl::OkStatus() : CudaStatus(result, what);
}

struct CudaDevice {
  CUdevice device = 0;
  int ordinal = 0;
  int sm = 0;  // compute capability * 10 (90 for an H100/H200)
  int sm_count = 0;
  int max_shared_memory_per_block_optin = 0;
  std::string name;
};

// Makes device `ordinal`'s primary context current on the calling thread
// unless a context is already current, and describes the current device.
// FAILED_PRECONDITION when there is no driver or no such device.
absl::StatusOr<CudaDevice> UseDevice(int ordinal = 0);

}  // namespace hummingd::gpu
