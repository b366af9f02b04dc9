"""Client in embedded mode (compiles in this process, caches in a temp dir)
through the real library: a GEMM set's ranges, lookup, launch params and
max_m cut; the memo; the errors the C ABI returns, as exceptions."""

import os
import re
import time
import unittest

import hummingd
from sdk_test_support import ARCH, DEQUANT_SPEC, GEMM_SPEC, temp_dir

N = K = 4096


class EmbeddedClientTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.folder = temp_dir(cls)
        cls.cache_dir = os.path.join(cls.folder, "cache")
        cls.client = hummingd.Client("embedded", cache_dir=cls.cache_dir)
        cls.addClassCleanup(cls.client.close)
        started = time.monotonic()
        cls.full = cls.client.resolve(GEMM_SPEC, N, K, ARCH)
        cls.first_seconds = time.monotonic() - started

    def test_mode(self):
        self.assertEqual(self.client.mode, "embedded")

    def test_gemm_set_ranges_are_contiguous_from_one(self):
        ranges = self.full.ranges
        self.assertGreater(len(ranges), 1)
        self.assertEqual(ranges[0][0], 1)
        for (_, previous_max), (m_min, m_max) in zip(ranges, ranges[1:]):
            self.assertEqual(m_min, previous_max + 1)
            self.assertLessEqual(m_min, m_max)
        self.assertEqual(len(self.full), len(ranges))
        self.assertEqual(self.full.max_m, 0)
        self.assertEqual((self.full.n, self.full.k, self.full.gpu),
                         (N, K, ARCH))

    def test_find_agrees_with_the_ranges(self):
        ranges = self.full.ranges
        last = ranges[-1][1]
        for m in [1, 2, 7, 8, 9, 17, 64, 65, 257, 1000, 4096, last]:
            with self.subTest(m=m):
                expected = [i for i, (low, high) in enumerate(ranges)
                            if low <= m <= high]
                self.assertEqual(len(expected), 1)
                self.assertEqual(self.full.find(m), expected[0])
        for m in [0, -5, last + 1]:
            with self.subTest(m=m):
                self.assertEqual(self.full.find(m), -1)

    def test_kernels_and_launch_params_are_sane(self):
        self.assertEqual(
            self.full.canonical_spec,
            "weight=uint4,group=128,scale=fp16,zero=none,scale2=none,"
            "act=fp16,act_scale=none,out=fp16,bias=0")
        for kernel in self.full.kernels:
            with self.subTest(kernel=kernel.index):
                self.assertTrue(kernel.entry)
                self.assertRegex(kernel.artifact_key, "^[0-9a-f]{64}$")
                self.assertIn("tile=", kernel.config)
                launch = kernel.launch
                self.assertGreater(launch.block_x, 0)
                self.assertEqual(launch.threads_per_block, launch.block_x)
                self.assertLessEqual(launch.threads_per_block, 1024)
                for grid in (launch.grid_x, launch.grid_y, launch.grid_z):
                    self.assertGreaterEqual(grid, 1)
                # A GEMM grid grows by one block row per tile of tokens.
                tile_tokens = int(re.search(r"tile=(\d+)x",
                                            kernel.config).group(1))
                self.assertEqual(launch.m_per_block_x, tile_tokens)
                # sm_90a's opt-in shared memory per block: 227 KiB; its
                # wgmma tiles stage operands in dynamic shared memory.
                self.assertLessEqual(launch.dynamic_shared_memory,
                                     227 * 1024)
                if "mma=wgmma" in kernel.config:
                    self.assertGreater(launch.dynamic_shared_memory, 0)
                cubin = self.full.cubin(kernel.index)
                self.assertEqual(len(cubin), kernel.cubin_size)
                self.assertEqual(cubin[:4], b"\x7fELF")

    def test_max_m_cuts_the_set(self):
        decode = self.client.resolve(GEMM_SPEC, N, K, ARCH, max_m=8)
        self.assertEqual(decode.max_m, 8)
        self.assertLess(len(decode), len(self.full))
        # The cut keeps the full plan's first ranges, kernels and launches.
        self.assertEqual(decode.kernels, self.full.kernels[:len(decode)])
        for m_min, _ in decode.ranges:
            self.assertLessEqual(m_min, 8)
        last = decode.ranges[-1][1]
        self.assertGreaterEqual(last, 8)
        self.assertGreaterEqual(decode.find(8), 0)
        self.assertEqual(decode.find(last + 1), -1)
        self.assertGreaterEqual(self.full.find(last + 1), 0)
        wider = self.client.resolve(GEMM_SPEC, N, K, ARCH, max_m=300)
        self.assertGreater(len(wider), len(decode))
        self.assertLess(wider.ranges[-1][0], 300)

    def test_a_second_resolve_is_memoized_and_identical(self):
        started = time.monotonic()
        again = self.client.resolve(GEMM_SPEC, N, K, ARCH)
        seconds = time.monotonic() - started
        self.assertEqual(again.kernels, self.full.kernels)
        self.assertEqual(again.cubin(0), self.full.cubin(0))
        # A memo hit is microseconds; the first resolve compiled kernels
        # (a ratio of one run, not an absolute time on a shared machine).
        self.assertLess(seconds, self.first_seconds)

    def test_invalid_spec_names_the_field(self):
        with self.assertRaises(hummingd.InvalidArgumentError) as caught:
            self.client.resolve("weight=uint9,group=128", N, K, ARCH)
        self.assertEqual(caught.exception.code_name, "INVALID_ARGUMENT")
        self.assertIn("spec.weight", caught.exception.message)
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    "request.shape.k: must be a multiple"):
            self.client.resolve(GEMM_SPEC, N, 100, ARCH)
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    "request.gpu.arch: unsupported"):
            self.client.resolve(GEMM_SPEC, N, K, "sm_1")

    def test_arguments_are_checked_before_ctypes_could_wrap_them(self):
        cases = [({"max_m": -1}, "max_m: must be in [0, 4294967295]"),
                 ({"max_m": 1 << 32}, "max_m: must be in"),
                 ({"n": 1 << 64}, "n: must be in"),
                 ({"k": 4096.0}, "k: must be an int (got float)"),
                 ({"family": "conv"}, "family: must be \"gemm\" or"),
                 ({"spec": b"weight=uint4"}, "spec: must be a str")]
        for change, message in cases:
            arguments = dict(spec=GEMM_SPEC, n=N, k=K, gpu=ARCH)
            arguments.update(change)
            with self.subTest(change=change):
                with self.assertRaises(
                        hummingd.InvalidArgumentError) as caught:
                    self.client.resolve(**arguments)
                self.assertIn(message, caught.exception.message)
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    "mode: must be"):
            hummingd.Client("remote")

    def test_second_client_on_the_same_cache_dir_is_refused(self):
        with self.assertRaises(hummingd.FailedPreconditionError) as caught:
            hummingd.Client("embedded", cache_dir=self.cache_dir)
        self.assertIn("is locked by another process", caught.exception.message)

    def test_prefetch_manifest(self):
        manifest = os.path.join(temp_dir(self), "manifest.yaml")
        with open(manifest, "w") as handle:
            handle.write("arch: %s\nfamily: dequant\nspec: %s\nlayers:\n"
                         "  - {name: a, n: 256, k: 256}\n"
                         "  - {name: b, n: 768, k: 256}\n"
                         % (ARCH, DEQUANT_SPEC))
        def stored_bytes():
            return sum(os.path.getsize(os.path.join(root, name))
                       for root, _, names in os.walk(self.cache_dir)
                       for name in names)

        before = stored_bytes()
        self.client.prefetch_manifest(manifest)
        # Two layers' plans and kernels were compiled and stored.
        self.assertGreater(stored_bytes(), before + 1000)
        with self.assertRaises(hummingd.NotFoundError) as caught:
            self.client.prefetch_manifest(manifest + ".missing")
        self.assertIn("manifest: cannot open", caught.exception.message)

    def test_closed_client_raises(self):
        with hummingd.Client("embedded",
                             cache_dir=os.path.join(temp_dir(self), "c")) as c:
            self.assertEqual(c.mode, "embedded")
        with self.assertRaisesRegex(hummingd.FailedPreconditionError,
                                    "client: closed"):
            c.resolve(GEMM_SPEC, N, K, ARCH)
        # Sets outlive their client (hummingd.h): the class's set still works.
        self.assertGreaterEqual(self.full.find(1), 0)


class NoGpuTest(unittest.TestCase):
    """Device calls on a host without an NVIDIA driver: a clear
    FAILED_PRECONDITION from the C ABI, never a crash."""

    @classmethod
    def setUpClass(cls):
        cls.client = hummingd.Client(
            "embedded", cache_dir=os.path.join(temp_dir(cls), "cache"))
        cls.addClassCleanup(cls.client.close)
        cls.gemm = cls.client.resolve(GEMM_SPEC, 256, 256, ARCH, max_m=16)
        cls.dequant = cls.client.resolve(DEQUANT_SPEC, 256, 256, ARCH,
                                         family="dequant")

    def setUp(self):
        if os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl"):
            self.skipTest("skipped: this host has an NVIDIA device "
                          "(tests/python/gpu covers it)")

    def assert_no_driver(self, caught):
        self.assertIs(type(caught.exception), hummingd.FailedPreconditionError)
        self.assertIn("cuda driver: cannot load libcuda.so.1",
                      caught.exception.message)

    def test_quantized_linear_from_raw_pointers(self):
        with self.assertRaises(hummingd.Error) as caught:
            hummingd.QuantizedLinear(self.client, self.gemm,
                                     weights=0x7f0000000000,
                                     scales=0x7f0000100000)
        self.assert_no_driver(caught)

    def test_quantized_linear_from_array_objects(self):
        from sdk_test_support import FakeDeviceArray
        with self.assertRaises(hummingd.Error) as caught:
            hummingd.QuantizedLinear(
                self.client, self.gemm,
                weights=FakeDeviceArray((256, 32), "<i4"),
                scales=FakeDeviceArray((256, 2), "<f2"), max_m=16)
        self.assert_no_driver(caught)

    def test_dequantize(self):
        from sdk_test_support import FakeDeviceArray
        with self.assertRaises(hummingd.Error) as caught:
            hummingd.dequantize(self.client, self.dequant,
                                weights=FakeDeviceArray((256, 32), "<u4"),
                                scales=FakeDeviceArray((256, 2), "<f2"),
                                output=FakeDeviceArray((256, 256), "<f2"))
        self.assert_no_driver(caught)


if __name__ == "__main__":
    unittest.main()
