"""cuBLAS reference times for the GEMM bench, by the method of KERNELS.md.

Dense fp16/bf16 Y = X @ W^T for the bench's shapes, through PyTorch (which
calls cuBLAS): weight copies rotated so one pass moves more than 3x the L2,
the calls captured in a CUDA graph, the median of replays divided by the
calls. Prints one line per case, "N K M dtype microseconds", the format
hummingd_gemm_bench --cublas_json reads, after a first line
"# tensor_tflops X": the dense fp16 rate of 8192^3 GEMMs on random data,
the tensor ceiling of KERNELS.md's roofline, which the bench takes on a GPU
with no committed ceilings (bench/kernel/gpu_ceilings.h).

  python3 bench/kernel/cublas_reference.py [--shapes 8192x8192,...] [--ms 1,2,...]
"""
import argparse
import math
import sys

import torch


def time_case(n, k, m, dtype, replays, l2_bytes):
    weight_bytes = n * k * 2
    copies = max(2, math.ceil(3 * l2_bytes / weight_bytes) + 1)
    weights = [torch.randn(n, k, device="cuda", dtype=dtype) for _ in range(copies)]
    x = torch.randn(m, k, device="cuda", dtype=dtype)
    y = torch.empty(m, n, device="cuda", dtype=dtype)
    launches = max(20, copies)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for w in weights:  # warm cuBLAS heuristics outside the capture
            torch.matmul(x, w.t(), out=y)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for i in range(launches):
            torch.matmul(x, weights[i % copies].t(), out=y)
    us = 1000.0 * graph_median_ms(graph, replays) / launches
    del weights, graph
    torch.cuda.empty_cache()
    return us


def graph_median_ms(graph, replays):
    """Median milliseconds of one replay of graph, after one warm replay."""
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]


def tensor_tflops(replays, size=8192, calls=5):
    """Dense fp16 TFLOP/s of size^3 GEMMs on random data, graph-replayed."""
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    c = torch.empty(size, size, device="cuda", dtype=torch.float16)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        torch.matmul(a, b, out=c)  # warm cuBLAS heuristics outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(calls):
            torch.matmul(a, b, out=c)
    ms = graph_median_ms(graph, replays)
    del a, b, c, graph
    torch.cuda.empty_cache()
    return 2.0 * size ** 3 * calls / (ms * 1e-3) / 1e12


def main():
    parser = argparse.ArgumentParser()
    # The same defaults as hummingd_gemm_bench's --shapes and --ms.
    parser.add_argument(
        "--shapes",
        default="8192x8192,28672x8192,8192x28672,4096x4096,6144x4096,4096x14336")
    parser.add_argument("--ms", default="1,2,4,8,16,32,64,256,1024,4096,8192")
    parser.add_argument("--dtypes", default="fp16,bf16")
    parser.add_argument("--replays", type=int, default=10)
    parser.add_argument("--l2_bytes", type=float, default=0,
                        help="L2 size the copies exceed 3x (0: KERNELS.md's 60 MB, "
                        "or the GPU's L2 where it exceeds the H200's 60 MiB; "
                        "hummingd_gemm_bench's rule)")
    args = parser.parse_args()
    l2_cache = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0)
    l2_bytes = args.l2_bytes or (l2_cache if l2_cache > 60 * 2 ** 20 else 60e6)
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    try:
        print(f"# tensor_tflops {tensor_tflops(args.replays):.1f}", flush=True)
    except RuntimeError as error:  # out of memory, say: the times still count
        print(f"cublas_reference: no tensor rate: {error}", file=sys.stderr)
    for shape in args.shapes.split(","):
        n, k = (int(v) for v in shape.split("x"))
        for m in (int(v) for v in args.ms.split(",")):
            for name in args.dtypes.split(","):
                us = time_case(n, k, m, dtypes[name], args.replays, l2_bytes)
                print(f"{n} {k} {m} {name} {us:.2f}", flush=True)


if __name__ == "__main__":
    main()
