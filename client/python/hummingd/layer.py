"""The device half: a quantized linear layer and dequantization.

Wraps hummingd_layer_create / _forward / _destroy and hummingd_dequantize.
Tensors are device pointers (int) or ``__cuda_array_interface__`` objects
(cuda_arrays.py); the latter are checked against the kernel set's spec and
shape here, naming the argument, since the C ABI sees only pointers.

A layer is created in the calling thread's current CUDA context (device
0's primary context, made current on the thread, when it has none) and
stays there: forward() and close() may then run on any thread, whatever
its current context, and a context of the caller's own (not a primary
one) must outlive the layer. dequantize() runs in the calling thread's
current context. Work is enqueued on ``stream`` (default 0, the legacy
default stream, which belongs to the layer's context); nothing here
synchronizes with a tensor's producer stream, so pass the stream the data
is ordered on.
"""

import ctypes

from . import _errors
from . import _library
from . import cuda_arrays
from ._owned_handle import OwnedHandle
from .spec import TensorLayout


def _require_family(kernel_set, family, what):
    if kernel_set.family != family:
        raise _errors.InvalidArgumentError(
            "kernel_set: %s needs a \"%s\" set (got \"%s\")"
            % (what, family, kernel_set.family))


def _checkpoint_weights(kernel_set, tensors):
    """hummingd_checkpoint_weights from {name: tensor or None}, each checked
    against the layout the set's spec implies for its N and K."""
    layouts = kernel_set.spec.checkpoint(kernel_set.n, kernel_set.k)
    weights = _library.CheckpointWeights()
    for name, value in tensors.items():
        layout = layouts[name]
        absent = value is None or (isinstance(value, int) and value == 0)
        if layout is None:
            if not absent:
                raise _errors.InvalidArgumentError(
                    "%s: the spec has none (%s), so none is taken"
                    % (name, kernel_set.spec.text))
            continue
        if absent:
            raise _errors.InvalidArgumentError(
                "%s: required by the spec (%s): %s %s"
                % (name, kernel_set.spec.text, layout.dtype,
                   layout.shape))
        setattr(weights, name,
                cuda_arrays.tensor_pointer(value, name, layout))
    return weights


class QuantizedLinear(OwnedHandle):
    """y (m, N) = x (m, K) . W^T (+ bias) with a "gemm" kernel set.

    Creation loads the set's kernels on the current device, allocates the
    repacked weights and split-K buffers for up to ``max_m`` tokens and
    enqueues the weight repack on ``stream``. ``weights`` may be freed once
    the stream has passed the repack (this object does not keep it);
    scales, zero points, secondary scale and bias are read by every forward
    and are kept referenced here. ``max_m`` defaults to the set's own
    (``Client.resolve(max_m=...)``) and is required for a set of every range.

    Forwards of one layer share its split-K buffers, so they must be ordered
    on one stream: ``forward(stream=None)`` takes the creation's stream,
    which the repack was enqueued on, so that the first forward follows it.
    """

    _WHAT = "layer"

    def __init__(self, client, kernel_set, weights, scales, zero_points=None,
                 secondary_scale=None, bias=None, max_m=None, stream=None):
        _require_family(kernel_set, "gemm", "a layer")
        if max_m is None:
            if not kernel_set.max_m:
                raise _errors.InvalidArgumentError(
                    "max_m: required when the kernel set holds every range "
                    "(resolved with max_m = 0)")
            max_m = kernel_set.max_m
        _library.checked_int(max_m, "max_m", 1, _library.INT64_MAX)
        spec = kernel_set.spec
        if spec.act not in ("fp16", "bf16") or spec.out not in ("fp16",
                                                                 "bf16"):
            raise _errors.UnimplementedError(
                "kernel_set: the layer API takes 16-bit activations and "
                "outputs (spec %s)" % spec.text)
        checkpoint = _checkpoint_weights(kernel_set, {
            "weights": weights, "scales": scales, "zero_points": zero_points,
            "secondary_scale": secondary_scale, "bias": bias})
        stream_handle = cuda_arrays.stream_handle(stream)
        self.stream_handle = stream_handle
        lib = _library.library()
        handle = ctypes.c_void_p()
        with kernel_set._using() as set_handle:
            client._call(lib.hummingd_layer_create, set_handle,
                         ctypes.byref(checkpoint), max_m, stream_handle,
                         ctypes.byref(handle))
        self._lib = lib
        self._own(handle, lib.hummingd_layer_destroy)
        # At interpreter exit the process's device memory goes with it;
        # freeing it then could meet a CUDA context already torn down.
        self._finalizer.atexit = False
        self.kernel_set = kernel_set
        self.n = kernel_set.n
        self.k = kernel_set.k
        self.max_m = max_m
        self._kept = (scales, zero_points, secondary_scale, bias)

    def forward(self, x, y, m=None, stream=None):
        """Writes y = x . W^T (+ bias) for m tokens on ``stream``; allocates
        nothing and never synchronizes (CUDA-graph capturable).

        x: (..., K) in the spec's act dtype, y: (..., N) in its out dtype,
        both C-contiguous. m defaults to x's rows (and y's must match);
        given, both must hold at least m rows. Raw pointers need m.
        """
        with self._using() as handle:
            self._forward(handle, x, y, m, stream)

    def _forward(self, handle, x, y, m, stream):
        spec = self.kernel_set.spec
        x_pointer, x_rows = cuda_arrays.rows_pointer(x, "x", spec.act, self.k)
        y_pointer, y_rows = cuda_arrays.rows_pointer(y, "y", spec.out, self.n,
                                                     writable=True)
        known = [(name, rows) for name, rows in (("x", x_rows),
                                                 ("y", y_rows))
                 if rows is not None]
        if m is None:
            if not known:
                raise _errors.InvalidArgumentError(
                    "m: required when x and y are raw pointers")
            if x_rows is not None and y_rows is not None and x_rows != y_rows:
                raise _errors.InvalidArgumentError(
                    "y: has %d rows but x has %d (pass m to use a prefix)"
                    % (y_rows, x_rows))
            m = known[0][1]
        _library.checked_int(m, "m", 1, _library.INT64_MAX)
        for name, rows in known:
            if rows < m:
                raise _errors.InvalidArgumentError(
                    "%s: has %d rows, fewer than m = %d" % (name, rows, m))
        status = self._lib.hummingd_layer_forward(
            handle, x_pointer, y_pointer, m,
            self.stream_handle if stream is None
            else cuda_arrays.stream_handle(stream))
        if status != 0:
            raise _errors.status_error(status, _library.decoded(
                self._lib.hummingd_layer_last_error(handle)))

    __call__ = forward

    # close() (OwnedHandle) frees the layer's device memory (after its
    # pending work) on the closing thread, once forwards other threads are
    # in have returned.


def dequantize(client, kernel_set, weights, scales, output, zero_points=None,
               secondary_scale=None, stream=None):
    """Writes the dense (N, K) weights of a checkpoint into ``output`` (the
    spec's out dtype) with a "dequant" kernel set, on ``stream``. The
    reference path, not the fast one; results match the CPU reference bit
    for bit."""
    _require_family(kernel_set, "dequant", "dequantize")
    checkpoint = _checkpoint_weights(kernel_set, {
        "weights": weights, "scales": scales, "zero_points": zero_points,
        "secondary_scale": secondary_scale})
    spec = kernel_set.spec
    if spec.out not in ("fp16", "bf16"):
        raise _errors.UnimplementedError(
            "kernel_set: dequantize writes fp16 or bf16 (spec %s)" % spec.text)
    output_pointer = cuda_arrays.tensor_pointer(
        output, "output", TensorLayout(spec.out, (kernel_set.n, kernel_set.k)),
        writable=True)
    stream_handle = cuda_arrays.stream_handle(stream)
    with kernel_set._using() as set_handle:
        client._call(_library.library().hummingd_dequantize, set_handle,
                     ctypes.byref(checkpoint), output_pointer, stream_handle)
