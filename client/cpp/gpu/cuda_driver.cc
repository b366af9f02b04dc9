#include "hummingd/gpu/cuda_driver.h"

#include <dlfcn.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace hummingd::gpu {
namespace {

#define HUMMINGD_STRINGIZE_INNER(x) #x
// Two levels so that the argument is macro-expanded first: the symbol looked
// up is cuda.h's versioned name (cuMemAlloc -> "cuMemAlloc_v2").
#define HUMMINGD_STRINGIZE(x) HUMMINGD_STRINGIZE_INNER(x)

constexpr char kDriverLibrary[] = "libcuda.so.1";

struct DriverLoad {
  CudaDriverApi api;
  absl::Status status;
};

template <class Fn>
void Resolve(void* handle, const char* symbol, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, symbol));
}

// Runs once per process. The handle is never closed: function pointers into
// the driver stay valid for the life of the process.
DriverLoad LoadDriver() {
  DriverLoad load;
  void* handle = dlopen(kDriverLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    load.status = absl::FailedPreconditionError(absl::StrCat(
        "cuda driver: cannot load ", kDriverLibrary,
        " (no NVIDIA driver on this host?): ", error ? error : "unknown"));
    return load;
  }
  CudaDriverApi& api = load.api;
#define HUMMINGD_RESOLVE(name) \
  Resolve(handle, HUMMINGD_STRINGIZE(name), &api.name);
  HUMMINGD_CUDA_DRIVER_FUNCTIONS(HUMMINGD_RESOLVE)
  HUMMINGD_CUDA_DRIVER_OPTIONAL_FUNCTIONS(HUMMINGD_RESOLVE)
#undef HUMMINGD_RESOLVE
#define HUMMINGD_REQUIRE(name)                                        \
  if (api.name == nullptr) {                                          \
    load.status = absl::FailedPreconditionError(                      \
        absl::StrCat("cuda driver: ", kDriverLibrary, " lacks ",      \
                     HUMMINGD_STRINGIZE(name), " (driver too old)")); \
    return load;                                                      \
  }
  HUMMINGD_CUDA_DRIVER_FUNCTIONS(HUMMINGD_REQUIRE)
#undef HUMMINGD_REQUIRE
  // cuGetErrorName is resolved above, so CudaStatus can describe these.
  CUresult result = api.cuInit(0);
  if (result == CUDA_SUCCESS) {
    result = api.cuDriverGetVersion(&api.driver_version);
  }
  if (result != CUDA_SUCCESS) {
    absl::Status status = CudaStatus(result, "cuInit");
    // Whatever cuInit says, a process without a working driver cannot use
    // a GPU: that is a precondition, not an internal error.
    load.status = absl::FailedPreconditionError(status.message());
  }
  return load;
}

const DriverLoad& Driver() {
  // Immutable once built; C++ guarantees one thread-safe initialization.
  static const DriverLoad* const load = new DriverLoad(LoadDriver());
  return *load;
}

bool IsPrecondition(CUresult result) {
  switch (result) {
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_DEVICE_NOT_LICENSED:
    case CUDA_ERROR_SYSTEM_NOT_READY:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<const CudaDriverApi*> CudaDriver() {
  const DriverLoad& load = Driver();
  RETURN_IF_ERROR(load.status);
  return &load.api;
}

absl::Status CudaStatus(CUresult result, absl::string_view what) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* description = nullptr;
  // Not through CudaDriver(): this also describes cuInit's own failure.
  const CudaDriverApi& api = Driver().api;
  if (api.cuGetErrorName != nullptr) api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString != nullptr) {
    api.cuGetErrorString(result, &description);
  }
  std::string message =
      absl::StrCat(what, ": ", name != nullptr ? name : "CUDA_ERROR", " (",
                   description != nullptr ? description : "unknown error",
                   ", code ", static_cast<int>(result), ")");
  if (IsPrecondition(result)) {
    return absl::FailedPreconditionError(message);
  }
  return absl::InternalError(message);
}

absl::StatusOr<CudaDevice> UseDevice(int ordinal) {
  ASSIGN_OR_RETURN(const CudaDriverApi* api, CudaDriver());
  CUcontext context = nullptr;
  RETURN_IF_ERROR(CudaCheck(api->cuCtxGetCurrent(&context), "cuCtxGetCurrent"));
  CudaDevice info;
  if (context == nullptr) {
    int count = 0;
    RETURN_IF_ERROR(
        CudaCheck(api->cuDeviceGetCount(&count), "cuDeviceGetCount"));
    if (ordinal < 0 || ordinal >= count) {
      return absl::FailedPreconditionError(
          absl::StrCat("cuda device ", ordinal, ": not present (", count,
                       " device(s) visible)"));
    }
    RETURN_IF_ERROR(
        CudaCheck(api->cuDeviceGet(&info.device, ordinal), "cuDeviceGet"));
    RETURN_IF_ERROR(
        CudaCheck(api->cuDevicePrimaryCtxRetain(&context, info.device),
                  "cuDevicePrimaryCtxRetain"));
    RETURN_IF_ERROR(
        CudaCheck(api->cuCtxSetCurrent(context), "cuCtxSetCurrent"));
    info.ordinal = ordinal;
  } else {
    RETURN_IF_ERROR(
        CudaCheck(api->cuCtxGetDevice(&info.device), "cuCtxGetDevice"));
    info.ordinal = static_cast<int>(info.device);
  }
  int major = 0;
  int minor = 0;
  RETURN_IF_ERROR(CudaCheck(
      api->cuDeviceGetAttribute(
          &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, info.device),
      "cuDeviceGetAttribute(compute capability major)"));
  RETURN_IF_ERROR(CudaCheck(
      api->cuDeviceGetAttribute(
          &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, info.device),
      "cuDeviceGetAttribute(compute capability minor)"));
  info.sm = major * 10 + minor;
  RETURN_IF_ERROR(CudaCheck(
      api->cuDeviceGetAttribute(&info.sm_count,
                                CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                info.device),
      "cuDeviceGetAttribute(multiprocessor count)"));
  RETURN_IF_ERROR(CudaCheck(
      api->cuDeviceGetAttribute(
          &info.max_shared_memory_per_block_optin,
          CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, info.device),
      "cuDeviceGetAttribute(max shared memory per block optin)"));
  char name[256] = {};
  RETURN_IF_ERROR(
      CudaCheck(api->cuDeviceGetName(name, sizeof(name) - 1, info.device),
                "cuDeviceGetName"));
  info.name = name;
  return info;
}

}  // namespace hummingd::gpu
