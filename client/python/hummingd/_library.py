"""Finds and loads libhummingd_client.so and declares the C ABI's prototypes.

Loaded on first use, not at import, so ``import hummingd`` works (and its
pure-Python parts can be tested) where the library is not installed. Every
function this package calls gets its argtypes and restype here, so a wrong
argument type fails in ctypes instead of reaching C as garbage.
"""

import ctypes
import ctypes.util
import os
import threading

from . import _errors

ENV_VAR = "HUMMINGD_CLIENT_LIBRARY"
SONAME = "libhummingd_client.so.0"

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT32_MAX = (1 << 32) - 1

# hummingd.h's enums.
MODE_AUTO = 0
MODE_DAEMON = 1
MODE_EMBEDDED = 2


class LaunchParams(ctypes.Structure):
    """hummingd_launch_params."""

    _fields_ = [
        ("block_x", ctypes.c_int32),
        ("grid_x", ctypes.c_int64),
        ("grid_y", ctypes.c_int64),
        ("grid_z", ctypes.c_int64),
        ("m_per_block_x", ctypes.c_int64),
        ("dynamic_shared_memory", ctypes.c_int32),
        ("threads_per_block", ctypes.c_int32),
    ]


class CheckpointWeights(ctypes.Structure):
    """hummingd_checkpoint_weights: device pointers, 0 where absent."""

    _fields_ = [
        ("weights", ctypes.c_uint64),
        ("scales", ctypes.c_uint64),
        ("zero_points", ctypes.c_uint64),
        ("secondary_scale", ctypes.c_uint64),
        ("bias", ctypes.c_uint64),
    ]


_client_p = ctypes.c_void_p
_set_p = ctypes.c_void_p
_layer_p = ctypes.c_void_p
_status = ctypes.c_int
_cstr = ctypes.c_char_p

# name: (restype, argtypes)
_PROTOTYPES = {
    "hummingd_status_name": (_cstr, [_status]),
    "hummingd_client_create": (
        _status, [ctypes.c_int, _cstr, _cstr, ctypes.POINTER(_client_p),
                  ctypes.c_char_p, ctypes.c_size_t]),
    "hummingd_client_destroy": (None, [_client_p]),
    "hummingd_client_mode": (ctypes.c_int, [_client_p]),
    "hummingd_client_last_error": (_cstr, [_client_p]),
    "hummingd_resolve_max_m": (
        _status, [_client_p, _cstr, _cstr, ctypes.c_int64, ctypes.c_int64,
                  _cstr, ctypes.c_uint32, ctypes.POINTER(_set_p)]),
    "hummingd_prefetch_manifest": (_status, [_client_p, _cstr]),
    "hummingd_kernel_set_destroy": (None, [_set_p]),
    "hummingd_kernel_set_size": (ctypes.c_int, [_set_p]),
    "hummingd_kernel_set_canonical_spec": (_cstr, [_set_p]),
    "hummingd_kernel_set_find": (ctypes.c_int, [_set_p, ctypes.c_int64]),
    "hummingd_kernel_m_min": (ctypes.c_int64, [_set_p, ctypes.c_int]),
    "hummingd_kernel_m_max": (ctypes.c_int64, [_set_p, ctypes.c_int]),
    "hummingd_kernel_entry": (_cstr, [_set_p, ctypes.c_int]),
    "hummingd_kernel_artifact_key": (_cstr, [_set_p, ctypes.c_int]),
    "hummingd_kernel_config": (_cstr, [_set_p, ctypes.c_int]),
    "hummingd_kernel_cubin": (
        ctypes.c_void_p,
        [_set_p, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]),
    "hummingd_kernel_launch_params": (
        _status, [_set_p, ctypes.c_int, ctypes.POINTER(LaunchParams)]),
    "hummingd_layer_create": (
        _status, [_client_p, _set_p, ctypes.POINTER(CheckpointWeights),
                  ctypes.c_int64, ctypes.c_void_p, ctypes.POINTER(_layer_p)]),
    "hummingd_layer_forward": (
        _status, [_layer_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int64,
                  ctypes.c_void_p]),
    "hummingd_layer_last_error": (_cstr, [_layer_p]),
    "hummingd_layer_destroy": (None, [_layer_p]),
    "hummingd_dequantize": (
        _status, [_client_p, _set_p, ctypes.POINTER(CheckpointWeights),
                  ctypes.c_uint64, ctypes.c_void_p]),
}

_lock = threading.Lock()
_loaded = None


def _candidates():
    """(description, loader) pairs, in the order they are tried."""
    path = os.environ.get(ENV_VAR)
    if path:
        # Set explicitly: only this file, so a typo never falls back to some
        # other installed copy.
        return [("$%s=%s" % (ENV_VAR, path), path)]
    found = ctypes.util.find_library("hummingd_client")
    candidates = [("the dynamic loader's %s" % SONAME, SONAME)]
    if found and found != SONAME:
        candidates.append(("ctypes.util.find_library: %s" % found, found))
    return candidates


def _declare(lib, origin):
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise _errors.FailedPreconditionError(
                "hummingd client library %s lacks %s (older than this "
                "package?)" % (origin, name)) from None
        function.restype = restype
        function.argtypes = argtypes


def library():
    """The loaded, prototyped library (loaded once per process).

    Raises FailedPreconditionError naming every place tried when none loads.
    """
    global _loaded
    with _lock:
        if _loaded is not None:
            return _loaded
        tried = []
        for description, target in _candidates():
            try:
                lib = ctypes.CDLL(target)
            except OSError as error:
                tried.append("%s (%s)" % (description, error))
                continue
            _declare(lib, description)
            _loaded = lib
            return lib
        raise _errors.FailedPreconditionError(
            "cannot load the hummingd client library; tried: %s. Build the "
            "CMake target hummingd_client (build/client/cpp/) or install it "
            "(cmake --install BUILD --component client), then set %s to the "
            "file or add its folder to the loader path"
            % ("; ".join(tried), ENV_VAR))


def checked_int(value, name, low, high):
    """An int in [low, high]; ctypes would silently wrap one outside its C
    type (max_m = -1 would become 4294967295)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _errors.InvalidArgumentError(
            "%s: must be an int (got %s)" % (name, type(value).__name__))
    if not low <= value <= high:
        raise _errors.InvalidArgumentError(
            "%s: must be in [%d, %d] (got %d)" % (name, low, high, value))
    return value


def text(value):
    """A str (or path) as the ``const char*`` the C ABI takes; None: NULL."""
    if value is None:
        return None
    return os.fsencode(value)


def decoded(value):
    """A ``const char*`` result as str ("" for NULL)."""
    return "" if value is None else value.decode("utf-8", "replace")
