#pragma once

// CHECK(cuda call) for the standalone probes in this folder: print the
// failing call's place and error, then exit (a probe has nothing to
// recover).

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                            \
  do {                                                                      \
    cudaError_t e = (x);                                                    \
    if (e != cudaSuccess) {                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)
