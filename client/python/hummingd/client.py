"""The connection to hummingd: resolves layers into kernel sets.

One ``Client`` wraps one ``hummingd_client`` handle of the C ABI, so it gets
the C++ SDK's modes (the node daemon, or compiling in-process into a local
cache), its per-request memo and its retry across a daemon restart. Calls
release the GIL while in C (ctypes does), so threads may resolve at once.
"""

import ctypes
import os

from . import _errors
from . import _library
from ._owned_handle import OwnedHandle
from .kernel_set import KernelSet

_MODES = {"auto": _library.MODE_AUTO, "daemon": _library.MODE_DAEMON,
          "embedded": _library.MODE_EMBEDDED}
_MODE_NAMES = {_library.MODE_DAEMON: "daemon",
               _library.MODE_EMBEDDED: "embedded"}
_FAMILIES = ("gemm", "dequant")
_CREATE_ERROR_BYTES = 4096


def _optional_path(value, name):
    if value is None:
        return None
    try:
        return os.fspath(value)
    except TypeError:
        raise _errors.InvalidArgumentError(
            "%s: must be a str or os.PathLike (got %s)"
            % (name, type(value).__name__)) from None


class Client(OwnedHandle):
    """Resolves kernel sets from the node daemon or in-process.

    mode: "auto" (the daemon if its health check answers, else embedded),
    "daemon" (UnavailableError naming the socket if none answers) or
    "embedded" (compiles here, caches in ``cache_dir``; one process per
    directory). ``socket`` / ``cache_dir`` default to $HUMMINGD_SOCKET /
    $HUMMINGD_CACHE_DIR and the C++ SDK's fallbacks (client/cpp/README.md).
    """

    _WHAT = "client"

    def __init__(self, mode="auto", socket=None, cache_dir=None):
        if mode not in _MODES:
            raise _errors.InvalidArgumentError(
                "mode: must be \"auto\", \"daemon\" or \"embedded\" (got %r)"
                % (mode,))
        socket = _optional_path(socket, "socket")
        cache_dir = _optional_path(cache_dir, "cache_dir")
        lib = _library.library()
        handle = ctypes.c_void_p()
        error = ctypes.create_string_buffer(_CREATE_ERROR_BYTES)
        status = lib.hummingd_client_create(
            _MODES[mode], _library.text(socket), _library.text(cache_dir),
            ctypes.byref(handle), error, len(error))
        if status != 0:
            raise _errors.status_error(status, _library.decoded(error.value))
        self._lib = lib
        self._own(handle, lib.hummingd_client_destroy)
        self.mode = _MODE_NAMES.get(lib.hummingd_client_mode(handle),
                                    "unknown")

    def check(self, status):
        """Raises the exception for a failed call on this client, with the
        message the library kept for this thread."""
        if status != 0:
            with self._using() as handle:
                self._raise_for(handle, status)

    def _raise_for(self, handle, status):
        raise _errors.status_error(status, _library.decoded(
            self._lib.hummingd_client_last_error(handle)))

    def _call(self, function, *args):
        """``function(client_handle, *args)``, raising its status with this
        thread's message, both inside one use of the handle: a close() from
        another thread meanwhile cannot free the client in between."""
        with self._using() as handle:
            status = function(handle, *args)
            if status != 0:
                self._raise_for(handle, status)

    def resolve(self, spec, n, k, gpu, max_m=0, family="gemm"):
        """The kernel set of a dense layer.

        spec: the spec text ("weight=uint4,group=128,scale=fp16"); n, k: the
        weights' shape; gpu: the arch the kernels will run on ("sm_90a",
        "sm_80", ...; no default, since kernels for another arch refuse to
        load); max_m: the most tokens this process will launch (the set then
        holds only the ranges serving M <= max_m, and only they compile;
        0 = every range); family: "gemm" or "dequant".
        """
        if family not in _FAMILIES:
            raise _errors.InvalidArgumentError(
                "family: must be \"gemm\" or \"dequant\" (got %r)" % (family,))
        for name, value in (("spec", spec), ("gpu", gpu)):
            if not isinstance(value, str):
                raise _errors.InvalidArgumentError("%s: must be a str (got %s)"
                                                   % (name,
                                                      type(value).__name__))
        _library.checked_int(n, "n", 1, _library.INT64_MAX)
        _library.checked_int(k, "k", 1, _library.INT64_MAX)
        _library.checked_int(max_m, "max_m", 0, _library.UINT32_MAX)
        out = ctypes.c_void_p()
        self._call(self._lib.hummingd_resolve_max_m, _library.text(spec),
                   _library.text(family), n, k, _library.text(gpu), max_m,
                   ctypes.byref(out))
        return KernelSet(out.value, family=family, n=n, k=k, gpu=gpu,
                         max_m=max_m)

    def prefetch_manifest(self, path):
        """Compiles/caches every layer of a YAML/JSON manifest (root README
        "Manifests"); raises the first item's error after all items ran."""
        path = _optional_path(path, "path")
        if path is None:
            raise _errors.InvalidArgumentError("path: must not be None")
        self._call(self._lib.hummingd_prefetch_manifest, _library.text(path))

    # close() (OwnedHandle) destroys the C client, after any call on it that
    # another thread is still in. Kernel sets and layers made with it stay
    # usable (they own what they need); new calls on it raise.

    def __repr__(self):
        state = "closed" if self.closed else "open"
        return "Client(mode=%r, %s)" % (self.mode, state)
