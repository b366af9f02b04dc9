/* Resolves one layer's kernel set through the C ABI and prints it:
 *   consumer_c auto|daemon|embedded SOCKET CACHE_DIR SPEC N K ARCH
 * ("" for SOCKET / CACHE_DIR: the defaults). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hummingd/hummingd.h"

int main(int argc, char** argv) {
  if (argc != 8) {
    fprintf(stderr,
            "usage: consumer_c auto|daemon|embedded SOCKET CACHE_DIR "
            "SPEC N K ARCH\n");
    return 2;
  }
  hummingd_mode mode = HUMMINGD_MODE_AUTO;
  if (strcmp(argv[1], "daemon") == 0) mode = HUMMINGD_MODE_DAEMON;
  if (strcmp(argv[1], "embedded") == 0) mode = HUMMINGD_MODE_EMBEDDED;

  char error[512];
  hummingd_client* client = NULL;
  hummingd_status status = hummingd_client_create(
      mode, argv[2], argv[3], &client, error, sizeof(error));
  if (status != HUMMINGD_OK) {
    fprintf(stderr, "consumer_c: %s: %s\n", hummingd_status_name(status),
            error);
    return 1;
  }
  hummingd_kernel_set* set = NULL;
  status = hummingd_resolve(client, argv[4], "dequant", atoll(argv[5]),
                            atoll(argv[6]), argv[7], &set);
  if (status != HUMMINGD_OK) {
    fprintf(stderr, "consumer_c: %s: %s\n", hummingd_status_name(status),
            hummingd_client_last_error(client));
    hummingd_client_destroy(client);
    return 1;
  }
  printf("kernels: %d\n", hummingd_kernel_set_size(set));
  for (int i = 0; i < hummingd_kernel_set_size(set); ++i) {
    size_t bytes = 0;
    hummingd_kernel_cubin(set, i, &bytes);
    printf("%lld..%lld %s %zu bytes\n",
           (long long)hummingd_kernel_m_min(set, i),
           (long long)hummingd_kernel_m_max(set, i),
           hummingd_kernel_entry(set, i), bytes);
  }
  hummingd_kernel_set_destroy(set);
  hummingd_client_destroy(client);
  return 0;
}
