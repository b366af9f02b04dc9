/* Exercises the C ABI (hummingd.h) from C:
 *   client_c_api_program MODE SOCKET CACHE_DIR [MANIFEST]
 * MODE: auto | daemon | embedded; "" for SOCKET / CACHE_DIR means default.
 * Resolves one fixed layer, checks every accessor, prints one line per
 * kernel ("kernel INDEX M_MIN M_MAX ARTIFACT_KEY CUBIN_BYTES FNV1A64") for
 * the calling test to compare with the daemon's own answer, then "ok".
 * Exit 0 only when every check held. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hummingd/hummingd.h"

#define kSpec "weight=uint4,group=128,scale=fp16,zero=none,act=fp16,out=fp16"
#define kN 512
#define kK 1024
#define kArch "sm_80"

static int failures = 0;

static void Check(int condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "check failed: %s\n", what);
    ++failures;
  }
}

static uint64_t Fnv1a64(const unsigned char* bytes, size_t size) {
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

static int ParseMode(const char* text, hummingd_mode* mode) {
  if (strcmp(text, "auto") == 0)
    *mode = HUMMINGD_MODE_AUTO;
  else if (strcmp(text, "daemon") == 0)
    *mode = HUMMINGD_MODE_DAEMON;
  else if (strcmp(text, "embedded") == 0)
    *mode = HUMMINGD_MODE_EMBEDDED;
  else
    return 0;
  return 1;
}

static void CheckKernelSet(const hummingd_kernel_set* set) {
  const int size = hummingd_kernel_set_size(set);
  Check(size > 0, "kernel set is not empty");
  Check(strstr(hummingd_kernel_set_canonical_spec(set), "uint4") != NULL,
        "canonical spec names the weight type");
  for (int i = 0; i < size; ++i) {
    const int64_t m_min = hummingd_kernel_m_min(set, i);
    const int64_t m_max = hummingd_kernel_m_max(set, i);
    Check(m_min <= m_max, "m_min <= m_max");
    if (i > 0) {
      Check(m_min == hummingd_kernel_m_max(set, i - 1) + 1,
            "M ranges are contiguous");
    }
    Check(hummingd_kernel_set_find(set, m_min) == i, "find(m_min) == index");
    Check(hummingd_kernel_set_find(set, m_max) == i, "find(m_max) == index");
    const char* entry = hummingd_kernel_entry(set, i);
    Check(entry != NULL && entry[0] != '\0', "entry symbol is set");
    const char* key = hummingd_kernel_artifact_key(set, i);
    Check(key != NULL && strlen(key) >= 16, "artifact key is set");
    const char* config = hummingd_kernel_config(set, i);
    Check(config != NULL && config[0] != '\0', "tile config is set");
    size_t bytes = 0;
    const unsigned char* cubin =
        (const unsigned char*)hummingd_kernel_cubin(set, i, &bytes);
    Check(cubin != NULL && bytes > 4 &&
              memcmp(cubin,
                     "\x7f"
                     "ELF",
                     4) == 0,
          "cubin is an ELF image");
    hummingd_launch_params launch;
    Check(hummingd_kernel_launch_params(set, i, &launch) == HUMMINGD_OK,
          "launch params");
    Check(launch.block_x > 0 && launch.threads_per_block > 0,
          "launch block size is positive");
    printf("kernel %d %" PRId64 " %" PRId64 " %s %zu %016" PRIx64 "\n", i,
           m_min, m_max, key ? key : "-", bytes,
           cubin ? Fnv1a64(cubin, bytes) : 0);
  }
  size_t bytes = 1;
  Check(hummingd_kernel_cubin(set, size, &bytes) == NULL && bytes == 0,
        "out-of-range cubin is NULL");
  hummingd_launch_params launch;
  Check(
      hummingd_kernel_launch_params(set, -1, &launch) == HUMMINGD_OUT_OF_RANGE,
      "out-of-range launch params");
}

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr,
            "usage: %s auto|daemon|embedded SOCKET CACHE_DIR "
            "[MANIFEST]\n",
            argv[0]);
    return 2;
  }
  hummingd_mode mode;
  if (!ParseMode(argv[1], &mode)) {
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
  }
  char error[512];
  hummingd_client* client = NULL;
  hummingd_status status = hummingd_client_create(
      mode, argv[2], argv[3], &client, error, sizeof(error));
  if (status != HUMMINGD_OK) {
    printf("create failed: %s: %s\n", hummingd_status_name(status), error);
    return 1;
  }
  Check(hummingd_client_mode(NULL) == HUMMINGD_MODE_AUTO,
        "the mode of a NULL client is AUTO");
  printf("mode %s\n", hummingd_client_mode(client) == HUMMINGD_MODE_DAEMON
                          ? "daemon"
                          : "embedded");

  hummingd_kernel_set* set = NULL;
  status = hummingd_resolve(client, kSpec, "dequant", kN, kK, kArch, &set);
  if (status != HUMMINGD_OK) {
    printf("resolve failed: %s: %s\n", hummingd_status_name(status),
           hummingd_client_last_error(client));
    hummingd_client_destroy(client);
    return 1;
  }
  CheckKernelSet(set);

  /* Memoized: the same bytes, not a copy. */
  hummingd_kernel_set* again = NULL;
  Check(hummingd_resolve(client, kSpec, "dequant", kN, kK, kArch, &again) ==
            HUMMINGD_OK,
        "second resolve");
  if (again != NULL) {
    Check(hummingd_kernel_cubin(again, 0, NULL) ==
              hummingd_kernel_cubin(set, 0, NULL),
          "second resolve shares the memoized set");
    hummingd_kernel_set_destroy(again);
  }
  /* Device side: a layer needs a GEMM set and a GPU; a dequant set is
   * refused for its family before anything is loaded, so with or without
   * a driver, never a crash. */
  {
    hummingd_checkpoint_weights weights;
    memset(&weights, 0, sizeof(weights));
    hummingd_layer* layer = NULL;
    Check(hummingd_layer_create(client, set, &weights, 16, NULL, &layer) ==
                  HUMMINGD_INVALID_ARGUMENT &&
              layer == NULL,
          "a layer from a dequant set is INVALID_ARGUMENT");
    Check(strstr(hummingd_client_last_error(client), "\"gemm\" kernel set") !=
              NULL,
          "the refusal says a layer needs a gemm set");
    Check(hummingd_layer_create(client, set, NULL, 16, NULL, &layer) ==
              HUMMINGD_INVALID_ARGUMENT,
          "NULL weights are INVALID_ARGUMENT");
  }
  hummingd_kernel_set_destroy(set);

  /* A GEMM set for at most 8 tokens: only the ranges serving M <= 8 (a
   * whole plan ends at M = 2^20), each found by M, none past the last. */
  {
    hummingd_kernel_set* decode = NULL;
    status = hummingd_resolve_max_m(client, kSpec, "gemm", 4096, 4096, kArch, 8,
                                    &decode);
    Check(status == HUMMINGD_OK, "resolve with max_m");
    if (status != HUMMINGD_OK) {
      fprintf(stderr, "resolve with max_m: %s: %s\n",
              hummingd_status_name(status), hummingd_client_last_error(client));
    }
    const int size = hummingd_kernel_set_size(decode);
    Check(size > 0, "the max_m set is not empty");
    for (int i = 0; i < size; ++i) {
      Check(hummingd_kernel_m_min(decode, i) <= 8,
            "every range of the max_m set serves some M <= 8");
    }
    const int64_t last = hummingd_kernel_m_max(decode, size - 1);
    Check(last >= 8 && last < (INT64_C(1) << 20),
          "the max_m set ends at or after 8, before the plan's end");
    Check(hummingd_kernel_set_find(decode, 8) >= 0, "find(8) in the max_m set");
    Check(hummingd_kernel_set_find(decode, last + 1) == -1,
          "find(last + 1) is -1 in the max_m set");
    /* Its kernels take GemmArgs: dequantizing with it would launch one with
     * the smaller DequantArgs. Refused before loading, driver or not. */
    hummingd_checkpoint_weights weights;
    memset(&weights, 0, sizeof(weights));
    weights.weights = UINT64_C(0x7f0000010000);
    weights.scales = UINT64_C(0x7f0000020000);
    Check(
        hummingd_dequantize(client, decode, &weights, UINT64_C(0x7f0000030000),
                            NULL) == HUMMINGD_INVALID_ARGUMENT,
        "dequantize with a gemm set is INVALID_ARGUMENT");
    Check(strstr(hummingd_client_last_error(client),
                 "needs a \"dequant\" kernel set") != NULL,
          "the refusal says dequantize needs a dequant set");
    hummingd_kernel_set_destroy(decode);
  }

  hummingd_kernel_set* bad = NULL;
  Check(hummingd_resolve(client, kSpec, "conv", kN, kK, kArch, &bad) ==
                HUMMINGD_INVALID_ARGUMENT &&
            bad == NULL,
        "unknown family is INVALID_ARGUMENT");
  Check(strstr(hummingd_client_last_error(client), "family") != NULL,
        "last error names the family");
  Check(hummingd_resolve(client, "weight=uint9", "dequant", kN, kK, kArch,
                         &bad) == HUMMINGD_INVALID_ARGUMENT,
        "bad spec is INVALID_ARGUMENT");
  Check(strstr(hummingd_client_last_error(client), "weight") != NULL,
        "last error names the weight field");

  if (argc == 5) {
    status = hummingd_prefetch_manifest(client, argv[4]);
    Check(status == HUMMINGD_OK, "prefetch of the manifest");
    if (status != HUMMINGD_OK) {
      fprintf(stderr, "prefetch: %s: %s\n", hummingd_status_name(status),
              hummingd_client_last_error(client));
    }
    Check(hummingd_prefetch_manifest(client, "/nonexistent/manifest.yaml") !=
              HUMMINGD_OK,
          "a missing manifest fails");
  }
  hummingd_client_destroy(client);
  if (failures == 0) printf("ok\n");
  return failures == 0 ? 0 : 1;
}
