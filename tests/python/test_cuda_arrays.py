"""cuda_arrays: __cuda_array_interface__ parsing and the checks made before a
pointer reaches C (dtype, contiguity, shape, writability), on stand-in
objects; and stream handles. No GPU or library needed."""

import types
import unittest

import hummingd
from hummingd import cuda_arrays
from hummingd.spec import TensorLayout
from sdk_test_support import FakeDeviceArray

POINTER = 0x7f0000001000


class DeviceArrayTest(unittest.TestCase):

    def test_reads_pointer_shape_typestr_and_stream(self):
        array = cuda_arrays.device_array(
            FakeDeviceArray((4, 8), "<f2", pointer=POINTER, stream=7), "x")
        self.assertEqual(array.pointer, POINTER)
        self.assertEqual(array.shape, (4, 8))
        self.assertEqual(array.typestr, "<f2")
        self.assertIsNone(array.strides)
        self.assertEqual(array.stream, 7)
        self.assertEqual(array.itemsize, 2)

    def test_native_and_byte_typestrs_are_normalized(self):
        self.assertEqual(cuda_arrays.device_array(
            FakeDeviceArray((2,), "=f2"), "x").typestr, "<f2")
        self.assertEqual(cuda_arrays.device_array(
            FakeDeviceArray((2,), "<u1"), "x").typestr, "|u1")

    def test_strides_variants(self):
        contiguous = [((4, 8), None), ((4, 8), (16, 2)),
                      ((1, 8), (999, 2)),   # a size-1 dim's stride is moot
                      ((4, 1), (2, 7)), ((0, 8), (2, 16))]
        for shape, strides in contiguous:
            with self.subTest(shape=shape, strides=strides):
                array = cuda_arrays.device_array(
                    FakeDeviceArray(shape, "<f2", strides=strides), "x")
                self.assertTrue(array.is_c_contiguous())
        strided = [((4, 8), (2, 8)),       # transposed
                   ((4, 8), (32, 2)),      # rows padded
                   ((4, 8), (16, 4))]      # every other element
        for shape, strides in strided:
            with self.subTest(shape=shape, strides=strides):
                array = cuda_arrays.device_array(
                    FakeDeviceArray(shape, "<f2", strides=strides), "x")
                self.assertFalse(array.is_c_contiguous())

    def test_not_an_array(self):
        with self.assertRaises(hummingd.InvalidArgumentError) as caught:
            cuda_arrays.device_array(object(), "scales")
        self.assertIn("scales: expected a device pointer (int) or an object "
                      "with __cuda_array_interface__ (got object)",
                      str(caught.exception))

    def test_malformed_and_masked_interfaces(self):
        broken = types.SimpleNamespace(
            __cuda_array_interface__={"shape": (2,), "typestr": "<f2"})
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    "^INVALID_ARGUMENT: x: malformed "
                                    "__cuda_array_interface__ .*data"):
            cuda_arrays.device_array(broken, "x")
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    "x: masked arrays are not supported"):
            cuda_arrays.device_array(
                FakeDeviceArray((2,), "<f2", mask=object()), "x")
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    r"strides \(2,\) do not match shape"):
            cuda_arrays.device_array(
                FakeDeviceArray((2, 2), "<f2", strides=(2,)), "x")

    def test_interface_that_raises(self):
        class Bf16Tensor:  # torch raises for dtypes without a typestr
            @property
            def __cuda_array_interface__(self):
                raise TypeError("dtype torch.bfloat16 is not supported")
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    "x: __cuda_array_interface__ failed: "
                                    "dtype torch.bfloat16"):
            cuda_arrays.device_array(Bf16Tensor(), "x")


class TensorPointerTest(unittest.TestCase):

    LAYOUT = TensorLayout("fp16", (256, 2))

    def test_matching_tensor_gives_its_pointer(self):
        self.assertEqual(cuda_arrays.tensor_pointer(
            FakeDeviceArray((256, 2), "<f2", pointer=POINTER), "scales",
            self.LAYOUT), POINTER)

    def test_size_one_dims_are_ignored(self):
        channel = TensorLayout("fp16", (256,))
        for shape in [(256,), (256, 1), (1, 256)]:
            with self.subTest(shape=shape):
                self.assertEqual(cuda_arrays.tensor_pointer(
                    FakeDeviceArray(shape, "<f2", pointer=POINTER), "scales",
                    channel), POINTER)

    def test_wrong_shape_names_the_argument(self):
        with self.assertRaises(hummingd.InvalidArgumentError) as caught:
            cuda_arrays.tensor_pointer(FakeDeviceArray((2, 256), "<f2"),
                                       "scales", self.LAYOUT)
        self.assertEqual(caught.exception.message,
                         "scales: shape must be (256, 2), got (2, 256)")

    def test_wrong_dtype_names_the_argument(self):
        with self.assertRaises(hummingd.InvalidArgumentError) as caught:
            cuda_arrays.tensor_pointer(FakeDeviceArray((256, 2), "<f4"),
                                       "scales", self.LAYOUT)
        self.assertEqual(caught.exception.message,
                         "scales: dtype must be fp16 (typestr '<f2'), got "
                         "typestr '<f4'")

    def test_non_contiguous_is_rejected(self):
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    r"^INVALID_ARGUMENT: scales: must be "
                                    r"C-contiguous \(shape \(256, 2\), "
                                    r"strides \(2, 512\) bytes\)$"):
            cuda_arrays.tensor_pointer(
                FakeDeviceArray((256, 2), "<f2", strides=(2, 512)), "scales",
                self.LAYOUT)

    def test_raw_views_stand_for_bf16_and_fp8(self):
        for dtype, typestrs, bad in [("bf16", ["<i2", "<u2", "<V2", "|V2"],
                                      "<f2"),
                                     ("e4m3", ["|u1", "|i1", "|V1"], "<f2"),
                                     ("uint32", ["<i4", "<u4"], "<f4")]:
            layout = TensorLayout(dtype, (8,))
            for typestr in typestrs:
                with self.subTest(dtype=dtype, typestr=typestr):
                    self.assertEqual(
                        cuda_arrays.tensor_pointer(
                            FakeDeviceArray((8,), typestr, pointer=0x7f0000001000),
                            "t", layout),
                        0x7f0000001000)
            with self.subTest(dtype=dtype, typestr=bad):
                with self.assertRaises(hummingd.InvalidArgumentError):
                    cuda_arrays.tensor_pointer(
                        FakeDeviceArray((8,), bad), "t", layout)

    def test_read_only_output_is_rejected(self):
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    "output: is read-only but is written"):
            cuda_arrays.tensor_pointer(
                FakeDeviceArray((256, 2), "<f2", readonly=True), "output",
                self.LAYOUT, writable=True)

    def test_raw_pointers_pass_unchecked_but_in_range(self):
        self.assertEqual(cuda_arrays.tensor_pointer(POINTER, "scales",
                                                    self.LAYOUT), POINTER)
        for bad in [-1, 1 << 64, True]:
            with self.subTest(value=bad):
                with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                            "^INVALID_ARGUMENT: scales: "):
                    cuda_arrays.tensor_pointer(bad, "scales", self.LAYOUT)


class RowsPointerTest(unittest.TestCase):

    def test_leading_dims_are_rows(self):
        self.assertEqual(cuda_arrays.rows_pointer(
            FakeDeviceArray((2, 3, 64), "<f2", pointer=POINTER), "x", "fp16",
            64), (POINTER, 6))
        self.assertEqual(cuda_arrays.rows_pointer(
            FakeDeviceArray((64,), "<f2", pointer=POINTER), "x", "fp16", 64),
            (POINTER, 1))
        self.assertEqual(cuda_arrays.rows_pointer(POINTER, "x", "fp16", 64),
                         (POINTER, None))

    def test_wrong_columns(self):
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    r"y: shape must be \(\.\.\., 64\), got "
                                    r"\(4, 32\)"):
            cuda_arrays.rows_pointer(FakeDeviceArray((4, 32), "<f2"), "y",
                                     "fp16", 64)


class StreamHandleTest(unittest.TestCase):

    def test_accepted_forms(self):
        class CudaPythonStream:
            def __cuda_stream__(self):
                return (0, 0x5000)
        cases = [(None, 0), (0, 0), (0x1234, 0x1234),
                 (types.SimpleNamespace(cuda_stream=0x2000), 0x2000),
                 (CudaPythonStream(), 0x5000),
                 (types.SimpleNamespace(__cuda_stream__=(0, 0x6000)), 0x6000)]
        for stream, handle in cases:
            with self.subTest(stream=stream):
                self.assertEqual(cuda_arrays.stream_handle(stream), handle)

    def test_rejected_forms(self):
        for stream in ["0", 1.5, -3, object(),
                       types.SimpleNamespace(__cuda_stream__=(1, 2, 3))]:
            with self.subTest(stream=stream):
                with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                            "^INVALID_ARGUMENT: stream"):
                    cuda_arrays.stream_handle(stream)


if __name__ == "__main__":
    unittest.main()
