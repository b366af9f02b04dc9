"""A resolved kernel set: its M ranges, kernels and launch parameters.

Owns one ``hummingd_kernel_set`` handle, which lives independently of the
client that resolved it (hummingd.h); the handle is freed by ``close()`` or
when the object is collected. The small per-kernel fields are read once at
construction; cubin bytes are copied only when asked for.
"""

import ctypes
import dataclasses

from . import _errors
from . import _library
from ._owned_handle import OwnedHandle
from .spec import Spec


@dataclasses.dataclass(frozen=True)
class LaunchParams:
    """hummingd_launch_params: grid_x is multiplied by
    ceil(M / m_per_block_x) when m_per_block_x > 0."""

    block_x: int
    grid_x: int
    grid_y: int
    grid_z: int
    m_per_block_x: int
    dynamic_shared_memory: int
    threads_per_block: int


@dataclasses.dataclass(frozen=True)
class Kernel:
    """One M range of a set and the kernel that serves it."""

    index: int
    m_min: int
    m_max: int   # inclusive
    entry: str
    artifact_key: str
    config: str  # the canonical tile config ("tile=...,mma=wgmma,...")
    launch: LaunchParams
    cubin_size: int


class KernelSet(OwnedHandle):
    """The kernels of one (spec, family, N, K, gpu, max_m) request."""

    _WHAT = "kernel set"

    def __init__(self, handle, family, n, k, gpu, max_m):
        """Takes ownership of ``handle`` (from hummingd_resolve_max_m)."""
        lib = _library.library()
        self._lib = lib
        self._own(ctypes.c_void_p(handle), lib.hummingd_kernel_set_destroy)
        self.family = family
        self.n = n
        self.k = k
        self.gpu = gpu
        self.max_m = max_m  # as requested; 0 = every range
        self.spec = Spec.parse(_library.decoded(
            lib.hummingd_kernel_set_canonical_spec(self._handle)))
        self.kernels = tuple(
            self._read_kernel(index)
            for index in range(lib.hummingd_kernel_set_size(self._handle)))

    def _read_kernel(self, index):
        lib, handle = self._lib, self._handle
        params = _library.LaunchParams()
        status = lib.hummingd_kernel_launch_params(handle, index,
                                                   ctypes.byref(params))
        if status != 0:
            raise _errors.status_error(
                status, "hummingd_kernel_launch_params(%d)" % index)
        size = ctypes.c_size_t(0)
        lib.hummingd_kernel_cubin(handle, index, ctypes.byref(size))
        return Kernel(
            index=index,
            m_min=lib.hummingd_kernel_m_min(handle, index),
            m_max=lib.hummingd_kernel_m_max(handle, index),
            entry=_library.decoded(lib.hummingd_kernel_entry(handle, index)),
            artifact_key=_library.decoded(
                lib.hummingd_kernel_artifact_key(handle, index)),
            config=_library.decoded(lib.hummingd_kernel_config(handle, index)),
            launch=LaunchParams(*(getattr(params, name) for name, _ in
                                  _library.LaunchParams._fields_)),
            cubin_size=size.value)

    @property
    def ranges(self):
        """[(m_min, m_max)] per kernel, inclusive, in order."""
        return [(kernel.m_min, kernel.m_max) for kernel in self.kernels]

    @property
    def canonical_spec(self):
        return self.spec.text

    def __len__(self):
        return len(self.kernels)

    def find(self, m):
        """Index of the kernel whose range holds ``m``, or -1 (as str.find
        and hummingd_kernel_set_find)."""
        _library.checked_int(m, "m", _library.INT64_MIN, _library.INT64_MAX)
        with self._using() as handle:
            return self._lib.hummingd_kernel_set_find(handle, m)

    def cubin(self, index):
        """A copy of kernel ``index``'s cubin (ranges sharing an artifact
        give the same bytes)."""
        kernel = self.kernels[index]
        size = ctypes.c_size_t(0)
        # The bytes belong to the handle: copied before it can be freed.
        with self._using() as handle:
            pointer = self._lib.hummingd_kernel_cubin(handle, kernel.index,
                                                      ctypes.byref(size))
            return ctypes.string_at(pointer, size.value) if pointer else b""

    # close() (OwnedHandle) frees the handle now; layers made from the set
    # keep what they need.

    def __repr__(self):
        return ("KernelSet(%s %s N=%d K=%d gpu=%s max_m=%d ranges=%s)"
                % (self.family, self.spec.text, self.n, self.k, self.gpu,
                   self.max_m, self.ranges))
