"""Device pointers and streams from what Python callers hold.

A tensor argument is either a raw device pointer (an int, taken as it is)
or any object exposing ``__cuda_array_interface__`` (torch, CuPy, Numba,
...): its pointer, shape, dtype and strides are read and checked against
what the layer needs, because the C ABI takes bare pointers and a tensor of
the wrong size or layout would only show up as wrong numbers or a fault on
the GPU. No array library is imported.

dtypes: the interface spells types as numpy typestrs, and no library
exports bf16 or fp8 through it (torch refuses), so those are accepted as raw
views of their width (``tensor.view(torch.int16)`` for bf16,
``.view(torch.uint8)`` for fp8 scales). Checkpoint weights are packed
32-bit words: int32 (GPTQ/AWQ checkpoints) or uint32.
"""

import dataclasses
import math

from . import _errors
from . import _library

_ACCEPTED_TYPESTRS = {
    "fp16": ("<f2",),
    "fp32": ("<f4",),
    "bf16": ("<V2", "|V2", "<i2", "<u2"),
    "e4m3": ("|V1", "|u1", "|i1"),
    "e5m2": ("|V1", "|u1", "|i1"),
    "ue8m0": ("|V1", "|u1", "|i1"),
    "uint8": ("|u1",),
    "int8": ("|i1",),
    "uint32": ("<u4", "<i4"),
}

_UINT64_MAX = (1 << 64) - 1


@dataclasses.dataclass(frozen=True)
class DeviceArray:
    """The parts of a ``__cuda_array_interface__`` this package uses.

    ``strides`` is in bytes and None for C-contiguous data (the interface's
    own convention); ``stream`` is the producer's stream entry, if any.
    """

    pointer: int
    shape: tuple
    typestr: str
    strides: tuple
    readonly: bool
    stream: object = None

    @property
    def itemsize(self):
        return int(self.typestr[2:])

    def is_c_contiguous(self):
        if self.strides is None or 0 in self.shape:
            return True
        expected = self.itemsize
        for extent, stride in zip(reversed(self.shape),
                                  reversed(self.strides)):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True


def _invalid(name, rule):
    return _errors.InvalidArgumentError("%s: %s" % (name, rule))


def _normalize_typestr(typestr):
    """'=f2' -> '<f2', '<u1' -> '|u1': one spelling per little-endian type."""
    if len(typestr) < 3 or typestr[0] not in "<>|=":
        return typestr
    order = "<" if typestr[0] == "=" else typestr[0]
    if typestr[2:] == "1":
        order = "|"
    return order + typestr[1:]


def device_array(value, name):
    """Reads ``value.__cuda_array_interface__`` (versions 0-3)."""
    try:
        interface = value.__cuda_array_interface__
    except AttributeError:
        raise _invalid(name, "expected a device pointer (int) or an object "
                       "with __cuda_array_interface__ (got %s)"
                       % type(value).__name__) from None
    except Exception as error:  # e.g. torch: bf16 has no typestr
        raise _invalid(name, "__cuda_array_interface__ failed: %s" % error)
    try:
        shape = tuple(int(extent) for extent in interface["shape"])
        typestr = _normalize_typestr(str(interface["typestr"]))
        pointer, readonly = interface["data"]
        strides = interface.get("strides")
        if strides is not None:
            strides = tuple(int(stride) for stride in strides)
    except (KeyError, TypeError, ValueError) as error:
        raise _invalid(name, "malformed __cuda_array_interface__ (%s: %s)"
                       % (type(error).__name__, error)) from None
    if interface.get("mask") is not None:
        raise _invalid(name, "masked arrays are not supported")
    if strides is not None and len(strides) != len(shape):
        raise _invalid(name, "strides %s do not match shape %s"
                       % (strides, shape))
    return DeviceArray(pointer=int(pointer or 0), shape=shape,
                       typestr=typestr, strides=strides,
                       readonly=bool(readonly),
                       stream=interface.get("stream"))


def raw_pointer(value, name):
    """An int device pointer, range-checked (ctypes would wrap it)."""
    return _library.checked_int(value, name, 0, _UINT64_MAX)


def check_array(array, name, dtype, writable=False):
    """Checks dtype, contiguity and (for outputs) writability."""
    accepted = _ACCEPTED_TYPESTRS[dtype]
    if array.typestr not in accepted:
        raise _invalid(name, "dtype must be %s (typestr %s), got typestr %r"
                       % (dtype, " or ".join(repr(t) for t in accepted),
                          array.typestr))
    if not array.is_c_contiguous():
        raise _invalid(name, "must be C-contiguous (shape %s, strides %s "
                       "bytes)" % (array.shape, array.strides))
    if writable and array.readonly:
        raise _invalid(name, "is read-only but is written")


def _squeezed(shape):
    return tuple(extent for extent in shape if extent != 1)


def tensor_pointer(value, name, layout, writable=False):
    """The device pointer of a checkpoint tensor whose layout is fixed.

    ``layout`` is a ``spec.TensorLayout``; dimensions of size 1 are ignored
    in the comparison (channel scales come as (N,), (N, 1) or (1, N)).
    """
    if isinstance(value, int):
        return raw_pointer(value, name)
    array = device_array(value, name)
    check_array(array, name, layout.dtype, writable)
    if _squeezed(array.shape) != _squeezed(layout.shape):
        raise _invalid(name, "shape must be %s, got %s"
                       % (layout.shape, array.shape))
    return array.pointer


def rows_pointer(value, name, dtype, columns, writable=False):
    """(pointer, rows) of an activation-like tensor shaped (..., columns);
    rows is None for a raw pointer."""
    if isinstance(value, int):
        return raw_pointer(value, name), None
    array = device_array(value, name)
    check_array(array, name, dtype, writable)
    if not array.shape or array.shape[-1] != columns:
        raise _invalid(name, "shape must be (..., %d), got %s"
                       % (columns, array.shape))
    return array.pointer, math.prod(array.shape[:-1])


def stream_handle(stream):
    """A CUstream value from an int, a ``__cuda_stream__`` object or an
    object with ``.cuda_stream`` (torch.cuda.Stream); None is 0, the legacy
    default stream."""
    if stream is None:
        return 0
    if isinstance(stream, int) and not isinstance(stream, bool):
        return raw_pointer(stream, "stream")
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        # CUDA Python: a method (older releases: an attribute) giving
        # (version, handle).
        value = protocol() if callable(protocol) else protocol
        try:
            _, handle = value
        except (TypeError, ValueError):
            raise _invalid("stream", "__cuda_stream__ gave %r, expected "
                           "(version, handle)" % (value,)) from None
        return raw_pointer(int(handle), "stream")
    handle = getattr(stream, "cuda_stream", None)
    if handle is not None:
        return raw_pointer(int(handle), "stream")
    raise _invalid("stream", "expected an int CUstream, an object with "
                   "__cuda_stream__ or .cuda_stream, or None (got %s)"
                   % type(stream).__name__)
