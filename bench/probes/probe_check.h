#pragma once

// What the standalone probes in this folder share: CHECK(cuda call), which
// prints the failing call's place and error and exits (a probe has nothing
// to recover), and the capture of a launch sequence into one CUDA graph.

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

// launch(i) for i < launches, captured on `stream` into one instantiated
// graph (the caller destroys it).
template <class Launch>
cudaGraphExec_t capture_graph(cudaStream_t stream, int launches,
                              Launch&& launch) {
  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < launches; ++i) launch(i);
  CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphDestroy(graph));
  return exec;
}
