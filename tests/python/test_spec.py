"""spec: a canonical spec text's checkpoint layouts, as
kernels/reference/dequant_reference.h defines them. No library needed."""

import unittest

import hummingd
from hummingd.spec import Spec, TensorLayout


def canonical(**overrides):
    fields = dict(weight="uint4", group="128", scale="fp16", zero="none",
                  scale2="none", act="fp16", act_scale="none", out="fp16",
                  bias="0")
    fields.update(overrides)
    return ",".join("%s=%s" % item for item in fields.items())


class SpecTest(unittest.TestCase):

    def test_group_scales_without_zero_points(self):
        layouts = Spec.parse(canonical()).checkpoint(n=512, k=1024)
        self.assertEqual(layouts["weights"],
                         TensorLayout("uint32", (512, 128)))
        self.assertEqual(layouts["scales"], TensorLayout("fp16", (512, 8)))
        self.assertIsNone(layouts["zero_points"])
        self.assertIsNone(layouts["secondary_scale"])
        self.assertIsNone(layouts["bias"])

    def test_every_granularity(self):
        for group, shape in [("64", (256, 8)), ("channel", (256,)),
                             ("tensor", (1,))]:
            with self.subTest(group=group):
                self.assertEqual(
                    Spec.parse(canonical(group=group)).scale_shape(256, 512),
                    shape)
        # 2-D blocks are K x N (block_k first): N = 256 in 64-row blocks,
        # K = 1024 in 128-column ones; the other order would give (2, 16).
        self.assertEqual(
            Spec.parse(canonical(group="128x64")).scale_shape(256, 1024),
            (4, 8))

    def test_weight_bits(self):
        for weight, bits, words in [("uint4", 4, 64), ("int8", 8, 128),
                                    ("uint3", 3, 48), ("e2m1", 4, 64),
                                    ("e4m3", 8, 128)]:
            with self.subTest(weight=weight):
                spec = Spec.parse(canonical(weight=weight))
                self.assertEqual(spec.weight_bits, bits)
                self.assertEqual(spec.checkpoint(16, 512)["weights"].shape,
                                 (16, words))

    def test_zero_points_secondary_scale_and_bias(self):
        spec = Spec.parse(canonical(zero="int", scale2="channel", out="bf16",
                                    bias="1", scale="bf16"))
        layouts = spec.checkpoint(n=256, k=512)
        self.assertEqual(layouts["zero_points"],
                         TensorLayout("uint8", (256, 4)))
        self.assertEqual(layouts["secondary_scale"],
                         TensorLayout("fp32", (256,)))
        self.assertEqual(layouts["bias"], TensorLayout("bf16", (256,)))
        float_zero = Spec.parse(canonical(zero="float", act="bf16",
                                          scale2="tensor"))
        layouts = float_zero.checkpoint(n=256, k=512)
        self.assertEqual(layouts["zero_points"],
                         TensorLayout("bf16", (256, 4)))
        self.assertEqual(layouts["secondary_scale"],
                         TensorLayout("fp32", (1,)))

    def test_not_canonical(self):
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    "lacks scale2, act_scale, bias"):
            Spec.parse("weight=uint4,group=128,scale=fp16,zero=none,act=fp16,"
                       "out=fp16")
        with self.assertRaisesRegex(hummingd.InvalidArgumentError,
                                    "weight 'uint' is not uintN"):
            Spec.parse(canonical(weight="uint"))


if __name__ == "__main__":
    unittest.main()
