"""Shared by the Python SDK's tests: temp dirs, the real hummingd binary on a
temp socket and cache dir (as tests/support/daemon_process does for C++),
hummingctl for its health and counters, and stand-ins for device tensors.

CMake passes the binaries' paths in $HUMMINGD_BINARY / $HUMMINGCTL_BINARY
and the library in $HUMMINGD_CLIENT_LIBRARY (tests/python/CMakeLists.txt).
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time

GEMM_SPEC = "weight=uint4,group=128,scale=fp16"
DEQUANT_SPEC = "weight=uint4,group=128,scale=fp16,zero=none,act=fp16,out=fp16"
ARCH = "sm_90a"


def binary(variable):
    path = os.environ.get(variable)
    if not path or not os.access(path, os.X_OK):
        raise RuntimeError("$%s must name the built binary (got %r); run "
                           "through ctest" % (variable, path))
    return path


def temp_dir(owner):
    """A fresh directory, removed when ``owner`` (a test, or a test class in
    setUpClass) is done."""
    path = tempfile.mkdtemp(prefix="hummingd-py-")
    cleanup = (owner.addClassCleanup if isinstance(owner, type)
               else owner.addCleanup)
    cleanup(shutil.rmtree, path, ignore_errors=True)
    return path


def ctl(socket, *args, timeout=60):
    return subprocess.run([binary("HUMMINGCTL_BINARY"), "--socket", socket,
                           *args], capture_output=True, text=True,
                          timeout=timeout)


class Daemon:
    """The real daemon as a child process; stop() sends SIGTERM."""

    def __init__(self, folder, extra_flags=()):
        self.socket = os.path.join(folder, "hummingd.sock")
        self.cache_dir = os.path.join(folder, "cache")
        self.log_path = os.path.join(folder, "hummingd.log")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [binary("HUMMINGD_BINARY"), "--socket", self.socket,
                 "--cache-dir", self.cache_dir, *extra_flags],
                stdout=log, stderr=subprocess.STDOUT)
        try:
            self._wait_until_serving()
        except BaseException:
            # No caller holds this object yet to stop it: a failed start
            # (a timeout, a missing hummingctl) must not leave hummingd
            # running.
            self.kill()
            raise

    def _wait_until_serving(self):
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    "hummingd exited with %d before serving:\n%s"
                    % (self.process.returncode, self.log()))
            if ctl(self.socket, "health", timeout=10).returncode == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError("hummingd not serving after 60 s:\n%s"
                                   % self.log())
            time.sleep(0.1)

    def log(self):
        with open(self.log_path, errors="replace") as handle:
            return handle.read()[-4000:]

    def stats(self):
        """The daemon's counters ("name: value" lines of hummingctl stats)."""
        result = ctl(self.socket, "stats")
        if result.returncode != 0:
            raise RuntimeError("hummingctl stats: %s" % result.stdout)
        counters = {}
        for line in result.stdout.splitlines():
            name, _, value = line.partition(":")
            if value.strip().lstrip("-").isdigit():
                counters[name.strip()] = int(value)
        return counters

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.process.returncode

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class FakeDeviceArray:
    """An object with a __cuda_array_interface__ and no memory behind it:
    enough for every check made before a pointer reaches C."""

    def __init__(self, shape, typestr, pointer=0x7f0000000000, strides=None,
                 readonly=False, version=3, **extra):
        self.__cuda_array_interface__ = dict(
            shape=tuple(shape), typestr=typestr, data=(pointer, readonly),
            strides=strides, version=version, **extra)
