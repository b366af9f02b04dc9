#pragma once

// What the standalone probes in this folder share: CHECK(cuda call), which
// prints the failing call's place and error and exits (a probe has nothing
// to recover), the capture of a launch sequence into one CUDA graph, and
// its median time per launch.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                            \
  do {                                                                      \
    cudaError_t e = (x);                                                    \
    if (e != cudaSuccess) {                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

// What the compute probes set up alike: the GPU's properties, its maximum
// SM clock (they count cycles at it), a stream, and a 4-byte sink their
// kernels write to keep their results alive.
struct ProbeGpu {
  cudaDeviceProp prop;
  int sms;
  int clock_khz;
  cudaStream_t stream;
  float* sink;
};

inline ProbeGpu open_probe_gpu() {
  ProbeGpu gpu{};
  int device = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaGetDeviceProperties(&gpu.prop, device));
  gpu.sms = gpu.prop.multiProcessorCount;
  CHECK(cudaDeviceGetAttribute(&gpu.clock_khz, cudaDevAttrClockRate, device));
  CHECK(cudaStreamCreate(&gpu.stream));
  CHECK(cudaMalloc(&gpu.sink, 4));
  return gpu;
}

// A launch of `blocks` x `threads` in clusters of `cluster` blocks (1: a
// plain launch); `attribute` must outlive the config.
inline cudaLaunchConfig_t cluster_launch_config(
    int blocks, int threads, int shared_bytes, int cluster, cudaStream_t stream,
    cudaLaunchAttribute* attribute) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks, 1, 1);
  config.blockDim = dim3(threads, 1, 1);
  config.dynamicSmemBytes = static_cast<size_t>(shared_bytes);
  config.stream = stream;
  attribute->id = cudaLaunchAttributeClusterDimension;
  attribute->val.clusterDim.x = static_cast<unsigned>(cluster);
  attribute->val.clusterDim.y = 1;
  attribute->val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  return config;
}

// Microseconds of one launch() on `stream`: the median of `repeats` launches,
// each timed alone with CUDA events, after one untimed warm-up.
template <class Launch>
float median_launch_us(cudaStream_t stream, int repeats, Launch&& launch) {
  cudaEvent_t begin, end;
  CHECK(cudaEventCreate(&begin));
  CHECK(cudaEventCreate(&end));
  std::vector<float> times;
  for (int r = 0; r <= repeats; ++r) {
    CHECK(cudaEventRecord(begin, stream));
    launch();
    CHECK(cudaEventRecord(end, stream));
    CHECK(cudaEventSynchronize(end));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, begin, end));
    if (r > 0) times.push_back(ms * 1000.0f);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(begin));
  CHECK(cudaEventDestroy(end));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

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

// Microseconds per launch: the median of `replays` timed replays (CUDA
// events around each) of one graph of launch(i), i < launches, after one
// untimed warm-up replay.
template <class Launch>
float median_graph_us(cudaStream_t stream, int launches, int replays,
                      Launch&& launch) {
  cudaGraphExec_t exec = capture_graph(stream, launches, launch);
  const float us = median_launch_us(
      stream, replays, [&] { CHECK(cudaGraphLaunch(exec, stream)); });
  CHECK(cudaGraphExecDestroy(exec));
  return us / launches;
}
