/* hummingd C ABI: kernel-set resolution for languages other than C++.
 *
 * Handles are opaque. Every fallible call returns a hummingd_status; on a
 * failure the message is kept per client handle and per calling thread
 * (hummingd_client_last_error), except for hummingd_client_create, which has
 * no handle yet and writes its message into the caller's buffer.
 * A kernel set handle owns its memory: pointers it hands out live until
 * hummingd_kernel_set_destroy, independently of the client.
 * Calls on one handle may run concurrently from several threads, except
 * its destroy function (hummingd_client_destroy, _kernel_set_destroy,
 * _layer_destroy): it must not overlap any other call that uses that
 * handle (one that takes it as an argument, including a client or set
 * passed to hummingd_layer_create / hummingd_dequantize), nor be followed
 * by one; the caller orders them (the Python SDK's close() waits for the
 * calls in flight, then frees).
 * Device-side calls work on the calling thread's current CUDA device
 * (device 0's primary context is made current on a thread that has none,
 * and stays current there); a layer stays in the context current at its
 * creation, which must outlive it when it is the caller's own (not a
 * primary context), and makes it current for its own calls (forward,
 * destroy) from any thread where they need it (not for a forward on a
 * stream of the caller's with a CUDA 12+ driver, which runs in the
 * stream's context); device pointers are CUdeviceptr values passed as
 * uint64_t, streams are CUstream values passed as void* (NULL = the legacy
 * default stream). The CUDA driver is loaded on first use: without one
 * they return HUMMINGD_FAILED_PRECONDITION. */
#ifndef HUMMINGD_HUMMINGD_H_
#define HUMMINGD_HUMMINGD_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Codes numbered as google.rpc.Code / absl::StatusCode. */
typedef enum hummingd_status {
  HUMMINGD_OK = 0,
  HUMMINGD_CANCELLED = 1,
  HUMMINGD_UNKNOWN = 2,
  HUMMINGD_INVALID_ARGUMENT = 3,
  HUMMINGD_DEADLINE_EXCEEDED = 4,
  HUMMINGD_NOT_FOUND = 5,
  HUMMINGD_ALREADY_EXISTS = 6,
  HUMMINGD_PERMISSION_DENIED = 7,
  HUMMINGD_RESOURCE_EXHAUSTED = 8,
  HUMMINGD_FAILED_PRECONDITION = 9,
  HUMMINGD_ABORTED = 10,
  HUMMINGD_OUT_OF_RANGE = 11,
  HUMMINGD_UNIMPLEMENTED = 12,
  HUMMINGD_INTERNAL = 13,
  HUMMINGD_UNAVAILABLE = 14,
  HUMMINGD_DATA_LOSS = 15,
  HUMMINGD_UNAUTHENTICATED = 16
} hummingd_status;

typedef enum hummingd_mode {
  HUMMINGD_MODE_AUTO = 0,    /* daemon if reachable, else embedded */
  HUMMINGD_MODE_DAEMON = 1,  /* the node daemon; an error if none answers */
  HUMMINGD_MODE_EMBEDDED = 2 /* compile in-process, cache in cache_dir */
} hummingd_mode;

typedef struct hummingd_client hummingd_client;
typedef struct hummingd_kernel_set hummingd_kernel_set;

/* Launch geometry of one kernel (see hummingd.v1.LaunchParams): grid_x is
 * multiplied by ceil(M / m_per_block_x) when m_per_block_x > 0. */
typedef struct hummingd_launch_params {
  int32_t block_x;
  int64_t grid_x;
  int64_t grid_y;
  int64_t grid_z;
  int64_t m_per_block_x;
  int32_t dynamic_shared_memory;
  int32_t threads_per_block;
} hummingd_launch_params;

/* "OK", "INVALID_ARGUMENT", … (static storage). */
const char* hummingd_status_name(hummingd_status status);

/* socket / cache_dir may be NULL or "" for the defaults ($HUMMINGD_SOCKET,
 * $HUMMINGD_CACHE_DIR, …). On failure *out is NULL and, when error is not
 * NULL, the message is written there (truncated to error_size, always
 * NUL-terminated). */
hummingd_status hummingd_client_create(hummingd_mode mode, const char* socket,
                                       const char* cache_dir,
                                       hummingd_client** out, char* error,
                                       size_t error_size);
void hummingd_client_destroy(hummingd_client* client);
/* The mode in use: HUMMINGD_MODE_DAEMON or HUMMINGD_MODE_EMBEDDED;
 * HUMMINGD_MODE_AUTO (never the mode of a client) for NULL. */
hummingd_mode hummingd_client_mode(const hummingd_client* client);
/* The message of this thread's last failed call on `client` ("" if none);
 * valid until this thread's next call on `client`. */
const char* hummingd_client_last_error(hummingd_client* client);

/* Resolves a dense layer. family: "dequant" or "gemm"; spec_text: the spec's
 * text form ("weight=uint4,group=128,…"); arch: "sm_90a", … Memoized per
 * request by the client. */
hummingd_status hummingd_resolve(hummingd_client* client, const char* spec_text,
                                 const char* family, int64_t n, int64_t k,
                                 const char* arch, hummingd_kernel_set** out);

/* hummingd_resolve for a client that launches at most max_m tokens
 * (KernelRequest.max_m): a "gemm" set then holds only the M ranges serving
 * some M <= max_m (the last may reach past it), and only their kernels are
 * compiled; 0 = every range, as hummingd_resolve does. "dequant" sets ignore
 * it. A separate entry point so that hummingd_resolve's signature stays as
 * built against. */
hummingd_status hummingd_resolve_max_m(hummingd_client* client,
                                       const char* spec_text,
                                       const char* family, int64_t n, int64_t k,
                                       const char* arch, uint32_t max_m,
                                       hummingd_kernel_set** out);

/* Compiles/caches every layer of a YAML/JSON manifest; the first item error
 * is returned after all items ran. */
hummingd_status hummingd_prefetch_manifest(hummingd_client* client,
                                           const char* path);

void hummingd_kernel_set_destroy(hummingd_kernel_set* set);
int hummingd_kernel_set_size(const hummingd_kernel_set* set);
const char* hummingd_kernel_set_canonical_spec(const hummingd_kernel_set* set);
/* Index of the kernel whose M range holds m, or -1. */
int hummingd_kernel_set_find(const hummingd_kernel_set* set, int64_t m);

/* Per kernel, 0 <= index < size; out-of-range indices give 0 / NULL /
 * HUMMINGD_OUT_OF_RANGE. */
int64_t hummingd_kernel_m_min(const hummingd_kernel_set* set, int index);
int64_t hummingd_kernel_m_max(const hummingd_kernel_set* set, int index);
const char* hummingd_kernel_entry(const hummingd_kernel_set* set, int index);
const char* hummingd_kernel_artifact_key(const hummingd_kernel_set* set,
                                         int index);
/* The kernel's canonical tile config ("tile=...,mma=wgmma,..."). A caller
 * that launches GEMM kernels itself rather than through hummingd_layer
 * follows this library's launch ABI (kernels/launch_abi.h): a config with
 * ",layout=kmajor" reads GemmArgs.scales as the [column][row] transpose of
 * the checkpoint's group scales (channel-wise scales as they are). */
const char* hummingd_kernel_config(const hummingd_kernel_set* set, int index);
/* The cubin of this kernel (ranges sharing an artifact share the bytes). */
const void* hummingd_kernel_cubin(const hummingd_kernel_set* set, int index,
                                  size_t* size);
hummingd_status hummingd_kernel_launch_params(const hummingd_kernel_set* set,
                                              int index,
                                              hummingd_launch_params* out);

/* ------------------------------------------------------- device side -- */

typedef struct hummingd_layer hummingd_layer;

/* A layer's tensors in the checkpoint layout (kernels/reference/
 * dequant_reference.h): packed weight rows (N, K*bits/32) uint32, scales,
 * and, when the spec has them, zero points, an fp32 secondary scale and an
 * (N) bias in the output dtype; 0 where absent. Weights, scales and zero
 * points 16-byte aligned, the others aligned to their element. */
typedef struct hummingd_checkpoint_weights {
  uint64_t weights;
  uint64_t scales;
  uint64_t zero_points;
  uint64_t secondary_scale;
  uint64_t bias;
} hummingd_checkpoint_weights;

/* Prepares a GEMM layer from a "gemm" kernel set (another family is
 * HUMMINGD_INVALID_ARGUMENT, with or without a driver): loads its kernels,
 * allocates the repacked weights and the split-K buffers for up to max_m
 * tokens and enqueues the weight repack on `stream`. The checkpoint weight
 * buffer may be freed once the stream has passed the repack; the other
 * tensors must outlive the layer. The layer keeps what it needs of `set`.
 * The layer lives in the context current on the calling thread, which the
 * caller must keep alive until hummingd_layer_destroy when it created it
 * (a primary context stays retained for the process). */
hummingd_status hummingd_layer_create(
    hummingd_client* client, const hummingd_kernel_set* set,
    const hummingd_checkpoint_weights* weights, int64_t max_m, void* stream,
    hummingd_layer** out);

/* y (m, N) = x (m, K) . W^T (+ bias) on `stream`; allocates nothing, never
 * synchronizes (CUDA-graph capturable). Forwards of one layer must be
 * ordered on one stream. Errors: hummingd_layer_last_error. */
hummingd_status hummingd_layer_forward(hummingd_layer* layer, uint64_t x,
                                       uint64_t y, int64_t m, void* stream);

/* The message of this thread's last failed call on `layer` ("" if none). */
const char* hummingd_layer_last_error(hummingd_layer* layer);

void hummingd_layer_destroy(hummingd_layer* layer);

/* Dequantizes checkpoint tensors (weights, scales, zero points, secondary
 * scale as above) into a dense (N, K) output with a "dequant" kernel set
 * (another family is HUMMINGD_INVALID_ARGUMENT, with or without a
 * driver). */
hummingd_status hummingd_dequantize(hummingd_client* client,
                                    const hummingd_kernel_set* set,
                                    const hummingd_checkpoint_weights* weights,
                                    uint64_t output, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HUMMINGD_HUMMINGD_H_ */
