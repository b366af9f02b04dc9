"""The layer API's checks before C: tensors against the kernel set's spec and
shape (naming the argument), max_m, and forward's m / rows / stream logic.
A stand-in kernel set and a recording stand-in for the library replace the
GPU; no library needed."""

import contextlib
import types
import unittest
from unittest import mock

import hummingd
from hummingd import _errors, _library
from hummingd.spec import Spec
from sdk_test_support import FakeDeviceArray

N, K = 256, 512
SPEC = ("weight=uint4,group=128,scale=fp16,zero=int,scale2=none,act=fp16,"
        "act_scale=none,out=bf16,bias=1")
X_POINTER, Y_POINTER = 0x7f0000010000, 0x7f0000020000


def stand_in_set(family="gemm", max_m=0, spec=SPEC):
    return types.SimpleNamespace(family=family, spec=Spec.parse(spec), n=N,
                                 k=K, max_m=max_m, handle=None,
                                 _using=lambda: contextlib.nullcontext(None))


def good_tensors():
    return dict(weights=FakeDeviceArray((N, K // 8), "<i4"),
                scales=FakeDeviceArray((N, K // 128), "<f2"),
                zero_points=FakeDeviceArray((N, K // 128), "|u1"),
                bias=FakeDeviceArray((N,), "<i2"))  # bf16 as an int16 view


class LayerCreateChecksTest(unittest.TestCase):
    """Every case fails before the client is touched (client=None)."""

    def create(self, kernel_set=None, max_m=16, **changes):
        tensors = good_tensors()
        tensors.update(changes)
        return hummingd.QuantizedLinear(None, kernel_set or stand_in_set(),
                                        max_m=max_m, **tensors)

    def assert_invalid(self, message, **arguments):
        with self.assertRaises(hummingd.InvalidArgumentError) as caught:
            self.create(**arguments)
        self.assertEqual(caught.exception.message, message)

    def test_tensor_mismatches_name_the_argument(self):
        self.assert_invalid(
            "weights: shape must be (256, 64), got (256, 128)",
            weights=FakeDeviceArray((N, K // 4), "<i4"))
        self.assert_invalid(
            "scales: dtype must be fp16 (typestr '<f2'), got typestr '<f4'",
            scales=FakeDeviceArray((N, K // 128), "<f4"))
        self.assert_invalid(
            "zero_points: must be C-contiguous (shape (256, 4), strides "
            "(1, 256) bytes)",
            zero_points=FakeDeviceArray((N, 4), "|u1", strides=(1, 256)))
        self.assert_invalid(
            "bias: dtype must be bf16 (typestr '<V2' or '|V2' or '<i2' or '<u2'), "
            "got typestr '<f2'", bias=FakeDeviceArray((N,), "<f2"))

    def test_tensors_the_spec_has_or_lacks(self):
        self.assert_invalid(
            "zero_points: required by the spec (%s): uint8 (256, 4)" % SPEC,
            zero_points=None)
        self.assert_invalid(
            "secondary_scale: the spec has none (%s), so none is taken"
            % SPEC, secondary_scale=FakeDeviceArray((1,), "<f4"))

    def test_family_and_max_m(self):
        self.assert_invalid(
            "kernel_set: a layer needs a \"gemm\" set (got \"dequant\")",
            kernel_set=stand_in_set(family="dequant"))
        self.assert_invalid(
            "max_m: required when the kernel set holds every range "
            "(resolved with max_m = 0)", max_m=None)
        self.assert_invalid("max_m: must be in [1, 9223372036854775807] "
                            "(got 0)", max_m=0)

    def test_pointers_max_m_and_stream_reach_the_library(self):
        library = RecordingLibrary()
        client = StandInClient()
        tensors = good_tensors()
        with mock.patch.object(_library, "library", return_value=library):
            layer = hummingd.QuantizedLinear(
                client, stand_in_set(max_m=8), stream=0x77, **tensors)
            # Forwards default to the stream the repack went on.
            layer.forward(FakeDeviceArray((3, K), "<f2", pointer=X_POINTER),
                          FakeDeviceArray((3, N), "<u2", pointer=Y_POINTER))
            layer.forward(X_POINTER, Y_POINTER, m=2, stream=0x99)
            layer.close()
        self.assertEqual([call[3] for call in library.calls], [0x77, 0x99])
        (weights, max_m, stream), = library.creates
        self.assertEqual(max_m, 8)  # the set's, as max_m was not given
        self.assertEqual(stream, 0x77)
        for name in ("weights", "scales", "zero_points", "bias"):
            self.assertEqual(
                weights[name],
                tensors[name].__cuda_array_interface__["data"][0], name)
        self.assertEqual(weights["secondary_scale"], 0)
        self.assertEqual(library.destroyed, 1)

    def test_dequantize_checks_its_output(self):
        tensors = good_tensors()
        del tensors["bias"]
        with self.assertRaises(hummingd.InvalidArgumentError) as caught:
            hummingd.dequantize(None, stand_in_set(family="dequant"),
                                output=FakeDeviceArray((K, N), "<i2"),
                                **tensors)
        self.assertEqual(caught.exception.message,
                         "output: shape must be (256, 512), got (512, 256)")
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    "dequantize needs a \"dequant\" set"):
            hummingd.dequantize(None, stand_in_set(), output=0, **tensors)


class RecordingLibrary:
    """Stands in for the library's layer calls; records their arguments."""

    def __init__(self, status=0, message=""):
        self.calls = []
        self.creates = []
        self.destroyed = 0
        self.status = status
        self.message = message

    def hummingd_layer_create(self, client, kernel_set, weights, max_m,
                              stream, out):
        fields = weights._obj  # the CheckpointWeights behind byref()
        self.creates.append(({name: getattr(fields, name)
                              for name, _ in fields._fields_}, max_m, stream))
        return self.status

    def hummingd_layer_destroy(self, handle):
        self.destroyed += 1

    def hummingd_layer_forward(self, handle, x, y, m, stream):
        self.calls.append((x, y, m, stream))
        return self.status

    def hummingd_layer_last_error(self, handle):
        return self.message.encode()


class StandInClient:
    handle = None

    def check(self, status):
        if status != 0:
            raise _errors.status_error(status, "stand-in")

    def _call(self, function, *args):
        self.check(function(self.handle, *args))


class ForwardChecksTest(unittest.TestCase):

    def layer(self, library=None):
        """A QuantizedLinear as __init__ leaves it, over the stand-ins."""
        layer = hummingd.QuantizedLinear.__new__(hummingd.QuantizedLinear)
        layer._lib = library or RecordingLibrary()
        layer._own(object(), lambda handle: None)
        layer.kernel_set = stand_in_set()
        layer.n, layer.k, layer.max_m = N, K, 64
        layer.stream_handle = 0  # created with stream=None
        return layer

    def x(self, rows, **extra):
        return FakeDeviceArray((rows, K), "<f2", pointer=X_POINTER, **extra)

    def y(self, rows, **extra):
        return FakeDeviceArray((rows, N), "<u2", pointer=Y_POINTER, **extra)

    def test_m_defaults_to_the_rows(self):
        layer = self.layer()
        layer.forward(self.x(7), self.y(7))
        layer.forward(FakeDeviceArray((2, 3, K), "<f2", pointer=X_POINTER),
                      self.y(6), stream=0x99)
        layer.forward(self.x(5), Y_POINTER)
        self.assertEqual(layer._lib.calls,
                         [(X_POINTER, Y_POINTER, 7, 0),
                          (X_POINTER, Y_POINTER, 6, 0x99),
                          (X_POINTER, Y_POINTER, 5, 0)])

    def test_m_may_use_a_prefix_of_larger_buffers(self):
        layer = self.layer()
        layer.forward(self.x(64), self.y(64), m=3,
                      stream=types.SimpleNamespace(cuda_stream=0x42))
        layer.forward(X_POINTER, Y_POINTER, m=9)
        self.assertEqual(layer._lib.calls, [(X_POINTER, Y_POINTER, 3, 0x42),
                                             (X_POINTER, Y_POINTER, 9, 0)])

    def test_rows_and_m_mismatches(self):
        layer = self.layer()
        cases = [((self.x(4), self.y(5)), {},
                  "y: has 5 rows but x has 4 (pass m to use a prefix)"),
                 ((self.x(4), self.y(8)), {"m": 6},
                  "x: has 4 rows, fewer than m = 6"),
                 ((X_POINTER, Y_POINTER), {},
                  "m: required when x and y are raw pointers"),
                 ((self.x(4), self.y(4, readonly=True)), {},
                  "y: is read-only but is written"),
                 ((self.y(4), self.y(4)), {},
                  "x: dtype must be fp16 (typestr '<f2'), got typestr '<u2'"),
                 ((X_POINTER, Y_POINTER), {"m": 0},
                  "m: must be in [1, 9223372036854775807] (got 0)")]
        for arguments, keywords, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(
                        hummingd.InvalidArgumentError) as caught:
                    layer.forward(*arguments, **keywords)
                self.assertEqual(caught.exception.message, message)
        self.assertEqual(layer._lib.calls, [])

    def test_a_failed_forward_raises_the_layers_message(self):
        message = "quantized_linear.m: must be in [1, 64] (got 65)"
        layer = self.layer(RecordingLibrary(status=3, message=message))
        with self.assertRaises(hummingd.InvalidArgumentError) as caught:
            layer.forward(X_POINTER, Y_POINTER, m=65)
        self.assertEqual(caught.exception.message, message)

    def test_closed_layer(self):
        layer = self.layer()
        layer.close()
        with self.assertRaisesRegex(hummingd.FailedPreconditionError,
                                    "layer: closed"):
            layer.forward(self.x(1), self.y(1))


if __name__ == "__main__":
    unittest.main()
