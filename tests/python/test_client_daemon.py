"""Client against the real hummingd binary on a temp socket and cache dir:
daemon mode serves the same kernels as embedded mode, a second client is a
daemon cache hit, prefetch reaches the daemon, auto mode picks the daemon
when it answers and embedded when none does, and daemon mode without a
daemon is UnavailableError naming the socket."""

import os
import unittest

import hummingd
from sdk_test_support import (ARCH, DEQUANT_SPEC, GEMM_SPEC, Daemon,
                              temp_dir)

N = K = 4096
MAX_M = 64


class DaemonClientTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(temp_dir(cls))
        cls.addClassCleanup(cls.daemon.stop)

    def client(self, mode="daemon"):
        # A temp cache_dir, so that auto mode falling back to embedded on a
        # loaded machine stays inside the test's folder.
        client = hummingd.Client(mode, socket=self.daemon.socket,
                                 cache_dir=os.path.join(temp_dir(self),
                                                        "cache"))
        self.addCleanup(client.close)
        return client

    def test_daemon_mode_serves_what_embedded_mode_builds(self):
        client = self.client()
        self.assertEqual(client.mode, "daemon")
        compiles_before = self.daemon.stats()["compiles"]
        served = client.resolve(GEMM_SPEC, N, K, ARCH, max_m=MAX_M)
        self.assertEqual(served.ranges[0][0], 1)
        self.assertGreaterEqual(served.ranges[-1][1], MAX_M)
        self.assertGreater(self.daemon.stats()["compiles"], compiles_before)

        cache_dir = os.path.join(temp_dir(self), "cache")
        with hummingd.Client("embedded", cache_dir=cache_dir) as local:
            built = local.resolve(GEMM_SPEC, N, K, ARCH, max_m=MAX_M)
            self.assertEqual(built.kernels, served.kernels)
            for kernel in served.kernels:
                self.assertEqual(built.cubin(kernel.index),
                                 served.cubin(kernel.index))

    def test_a_second_client_is_served_from_the_daemons_cache(self):
        first = self.client().resolve(GEMM_SPEC, 2048, 4096, ARCH, max_m=8)
        before = self.daemon.stats()
        second = self.client().resolve(GEMM_SPEC, 2048, 4096, ARCH, max_m=8)
        after = self.daemon.stats()
        self.assertEqual(second.kernels, first.kernels)
        self.assertEqual(after["compiles"], before["compiles"])
        self.assertGreater(after["requests"], before["requests"])

    def test_daemon_refuses_an_invalid_spec_by_field(self):
        with self.assertRaises(hummingd.InvalidArgumentError) as caught:
            self.client().resolve("weight=uint4,group=100", N, K, ARCH)
        self.assertIn("group", caught.exception.message)

    def test_prefetch_manifest_reaches_the_daemon(self):
        manifest = os.path.join(temp_dir(self), "manifest.yaml")
        with open(manifest, "w") as handle:
            handle.write("arch: %s\nfamily: dequant\nspec: %s\nlayers:\n"
                         "  - {name: a, n: 256, k: 512}\n"
                         "  - {name: b, n: 768, k: 512}\n"
                         % (ARCH, DEQUANT_SPEC))
        before = self.daemon.stats()["prefetch_items"]
        self.client().prefetch_manifest(manifest)
        self.assertGreaterEqual(self.daemon.stats()["prefetch_items"],
                                before + 2)

    def test_auto_mode_uses_the_daemon(self):
        self.assertEqual(self.client("auto").mode, "daemon")


class NoDaemonTest(unittest.TestCase):

    def test_daemon_mode_without_daemon_is_unavailable(self):
        socket = os.path.join(temp_dir(self), "none.sock")
        with self.assertRaises(hummingd.UnavailableError) as caught:
            hummingd.Client("daemon", socket=socket)
        self.assertEqual(caught.exception.code, 14)
        self.assertIn("hummingd daemon unreachable at %s" % socket,
                      caught.exception.message)

    def test_auto_mode_without_daemon_is_embedded(self):
        folder = temp_dir(self)
        socket = os.path.join(folder, "none.sock")
        cache_dir = os.path.join(folder, "cache")
        with hummingd.Client("auto", socket=socket,
                             cache_dir=cache_dir) as client:
            self.assertEqual(client.mode, "embedded")
            kernel_set = client.resolve(DEQUANT_SPEC, 256, 256, ARCH,
                                        family="dequant")
            self.assertEqual(kernel_set.ranges[0][0], 1)


if __name__ == "__main__":
    unittest.main()
