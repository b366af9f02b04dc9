"""QuantizedLinear and dequantize on a real GPU through the Python SDK, with
torch tensors passed by __cuda_array_interface__ (bf16 as int16 views).

Fresh random checkpoints each run (seed printed): uint4 codes packed as the
checkpoint layout (kernels/reference/dequant_reference.h), positive scales,
and for the bf16 case integer zero points and a bias. The reference weights
are computed exactly in fp32 here, and hummingd.dequantize's dense output
must equal them rounded to the output dtype bit for bit, so the GEMM
reference is dequantize's weights without their output rounding. Each
forward writes into NaN-poisoned output and is compared with an fp64 matmul
by ||y - ref|| / ||ref|| against KERNELS.md's bounds (fp16 1e-3, bf16 8e-3),
at M values spanning several of the plan's ranges.

Needs torch with CUDA; otherwise every test is skipped with the reason.
"""

import os
import sys
import tempfile
import time
import unittest

import hummingd

try:
    import torch
except ImportError as error:
    torch = None
    SKIP_REASON = "skipped: no torch (%s)" % error
else:
    SKIP_REASON = (None if torch.cuda.is_available() else
                   "skipped: no GPU (torch.cuda.is_available() is False)")
if SKIP_REASON:
    print(SKIP_REASON, file=sys.stderr)

N = K = 4096
GROUP = 128
MS = [1, 7, 17, 64, 257, 1000]
CASES = {
    "fp16": dict(spec="weight=uint4,group=128,scale=fp16,act=fp16,out=fp16",
                 dtype="float16", bound=1e-3, zero_points=False, bias=False),
    "bf16_zero_bias": dict(
        spec="weight=uint4,group=128,scale=bf16,zero=int,act=bf16,out=bf16,"
             "bias=1",
        dtype="bfloat16", bound=8e-3, zero_points=True, bias=True),
}


def device_arch():
    """The arch to compile for: $HUMMINGD_TEST_ARCH, else the device's
    (sm_90a on Hopper: the wgmma kernels need the arch-specific target)."""
    if os.environ.get("HUMMINGD_TEST_ARCH"):
        return os.environ["HUMMINGD_TEST_ARCH"]
    major, minor = torch.cuda.get_device_capability()
    suffix = "a" if (major, minor) == (9, 0) else ""
    return "sm_%d%d%s" % (major, minor, suffix)


def cuda_view(tensor):
    """What the SDK can read through __cuda_array_interface__: bf16 has no
    typestr, so it travels as an int16 view of the same bytes."""
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16)
    return tensor


def pack_uint4_rows(codes):
    """(N, K) codes in [0, 16) -> (N, K / 8) int32 words, element c at bits
    [4c, 4c + 4) of its row's little-endian bit stream."""
    rows, columns = codes.shape
    nibbles = codes.to(torch.int64).reshape(rows, columns // 8, 8)
    shifts = torch.arange(0, 32, 4, device=codes.device, dtype=torch.int64)
    words = (nibbles << shifts).sum(dim=2)
    words = torch.where(words >= 1 << 31, words - (1 << 32), words)
    return words.to(torch.int32).contiguous()


@unittest.skipIf(SKIP_REASON is not None, SKIP_REASON or "")
class QuantizedLinearGpuTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.seed = int(os.environ.get("HUMMINGD_TEST_SEED",
                                      time.time_ns() % (1 << 31)))
        print("seed %d (HUMMINGD_TEST_SEED to repeat)" % cls.seed,
              file=sys.stderr)
        torch.manual_seed(cls.seed)
        cls.arch = device_arch()
        cls.folder = tempfile.TemporaryDirectory(prefix="hummingd-py-gpu-")
        cls.addClassCleanup(cls.folder.cleanup)
        cls.client = hummingd.Client(
            "embedded", cache_dir=os.path.join(cls.folder.name, "cache"))
        cls.addClassCleanup(cls.client.close)

    def checkpoint(self, case):
        """Random checkpoint tensors on the GPU and the exact fp32 weights."""
        dtype = getattr(torch, case["dtype"])
        device = "cuda"
        codes = torch.randint(0, 16, (N, K), device=device)
        scales = torch.exp2(torch.empty(N, K // GROUP, device=device)
                            .uniform_(-7, -1)).to(dtype)
        tensors = dict(weights=pack_uint4_rows(codes), scales=scales)
        zero = 8.0
        if case["zero_points"]:
            zero_points = torch.randint(0, 16, (N, K // GROUP), device=device,
                                        dtype=torch.uint8)
            tensors["zero_points"] = zero_points
            zero = zero_points.float().repeat_interleave(GROUP, dim=1)
        if case["bias"]:
            tensors["bias"] = torch.empty(N, device=device).uniform_(
                -1, 1).to(dtype)
        weights = ((codes.float() - zero)
                   * scales.float().repeat_interleave(GROUP, dim=1))
        self.assertGreater(weights.abs().max().item(), 0)
        return tensors, weights

    def run_case(self, name):
        case = CASES[name]
        dtype = getattr(torch, case["dtype"])
        tensors, weights = self.checkpoint(case)
        stream = torch.cuda.current_stream()

        # dequantize: bit-exact against the exact weights, rounded.
        dequant_set = self.client.resolve(case["spec"], N, K, self.arch,
                                          family="dequant")
        dense = torch.full((N, K), float("nan"), device="cuda", dtype=dtype)
        hummingd.dequantize(
            self.client, dequant_set, weights=tensors["weights"],
            scales=cuda_view(tensors["scales"]),
            zero_points=tensors.get("zero_points"), output=cuda_view(dense),
            stream=stream)
        torch.cuda.synchronize()
        expected = weights.to(dtype)
        mismatches = (dense.view(torch.int16)
                      != expected.view(torch.int16)).sum().item()
        self.assertEqual(mismatches, 0,
                         "dequantize differs from the reference in %d of %d "
                         "elements" % (mismatches, N * K))

        max_m = max(MS)
        gemm_set = self.client.resolve(case["spec"], N, K, self.arch,
                                       max_m=max_m)
        # MS and the first M of every range the set holds: forward runs
        # every kernel of the set.
        ms = sorted(set(MS) | {low for low, _ in gemm_set.ranges})
        self.assertEqual({gemm_set.find(m) for m in ms},
                         set(range(len(gemm_set.ranges))), gemm_set.ranges)
        layer = hummingd.QuantizedLinear(
            self.client, gemm_set,
            **{key: cuda_view(value) for key, value in tensors.items()},
            stream=stream)
        self.addCleanup(layer.close)
        self.assertEqual(layer.max_m, max_m)

        bias = tensors["bias"].double() if case["bias"] else 0.0
        weights_t = weights.double().T
        for m in ms:
            with self.subTest(case=name, m=m):
                x = torch.empty(m, K, device="cuda").uniform_(-1, 1).to(dtype)
                y = torch.full((m, N), float("nan"), device="cuda",
                               dtype=dtype)
                layer.forward(cuda_view(x), cuda_view(y), stream=stream)
                torch.cuda.synchronize()
                self.assertTrue(torch.isfinite(y).all().item(),
                                "NaN/inf left in y (m=%d)" % m)
                reference = x.double() @ weights_t + bias
                error = ((y.double() - reference).norm()
                         / reference.norm()).item()
                print("%s m=%d kernel %d: relative error %.3g (bound %g)"
                      % (name, m, gemm_set.find(m), error, case["bound"]),
                      file=sys.stderr)
                self.assertLessEqual(error, case["bound"])

        # The C ABI's own checks arrive as named exceptions.
        with self.assertRaises(hummingd.InvalidArgumentError) as caught:
            layer.forward(torch.empty(max_m + 1, K, device="cuda",
                                      dtype=torch.float16).data_ptr(),
                          torch.empty(max_m + 1, N, device="cuda",
                                      dtype=torch.float16).data_ptr(),
                          m=max_m + 1)
        self.assertIn("quantized_linear.m: must be in [1, %d]" % max_m,
                      caught.exception.message)
        misaligned = dict(tensors, scales=tensors["scales"].data_ptr() + 2)
        with self.assertRaises(hummingd.InvalidArgumentError) as caught:
            hummingd.QuantizedLinear(
                self.client, gemm_set,
                **{key: (value if isinstance(value, int) else cuda_view(value))
                   for key, value in misaligned.items()})
        self.assertIn("quantized_linear.scales: must be 16-byte aligned",
                      caught.exception.message)

    def test_fp16(self):
        self.run_case("fp16")

    def test_bf16_with_zero_points_and_bias(self):
        self.run_case("bf16_zero_bias")


if __name__ == "__main__":
    unittest.main()
