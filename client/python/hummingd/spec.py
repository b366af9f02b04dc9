"""A kernel set's canonical spec text and the checkpoint tensors it implies.

The daemon validates specs; this module only reads the canonical text a
kernel set carries (every key present, kernels/spec_text.cc) so that the
layer API can check tensors' shapes and dtypes before their pointers reach
C, where a wrong size could only fault on the GPU. The layout is the one
kernels/reference/dequant_reference.h defines.
"""

import dataclasses
import re

from . import _errors

# Bytes per element of each data type name of the text form.
DTYPE_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4, "e4m3": 1, "e5m2": 1,
               "ue8m0": 1, "int8": 1, "int4": 1, "uint8": 1, "uint32": 4}


@dataclasses.dataclass(frozen=True)
class TensorLayout:
    """What one checkpoint tensor must be: dtype name and shape."""

    dtype: str
    shape: tuple


@dataclasses.dataclass(frozen=True)
class Spec:
    """The fields of a canonical spec text that decide tensor layouts."""

    text: str
    weight: str        # uint4, int8, e4m3, ...
    weight_bits: int
    group: str         # "128", "channel", "tensor" or "KxN"
    scale: str
    zero: str          # none | int | float
    scale2: str        # none | tensor | channel
    act: str
    act_scale: str
    out: str
    bias: bool

    @classmethod
    def parse(cls, text):
        """Reads a canonical spec text (all nine keys, as sets carry)."""
        fields = {}
        for item in text.split(","):
            key, sep, value = item.partition("=")
            if not sep:
                raise _errors.InvalidArgumentError(
                    "spec text: item %r has no '=' (in %r)" % (item, text))
            fields[key.strip()] = value.strip()
        keys = ("weight", "group", "scale", "zero", "scale2", "act",
                "act_scale", "out", "bias")
        missing = [key for key in keys if key not in fields]
        if missing:
            raise _errors.InvalidArgumentError(
                "spec text: %r lacks %s (not a canonical spec)"
                % (text, ", ".join(missing)))
        return cls(text=text, weight=fields["weight"],
                   weight_bits=_weight_bits(fields["weight"]),
                   group=fields["group"], scale=fields["scale"],
                   zero=fields["zero"], scale2=fields["scale2"],
                   act=fields["act"], act_scale=fields["act_scale"],
                   out=fields["out"], bias=fields["bias"] == "1")

    def scale_shape(self, n, k):
        """The scale grid (and zero-point grid) of an (N, K) weight."""
        if self.group == "channel":
            return (n,)
        if self.group == "tensor":
            return (1,)
        block = re.fullmatch(r"(\d+)x(\d+)", self.group)
        if block:
            block_k, block_n = int(block.group(1)), int(block.group(2))
            return (n // block_n, k // block_k)
        return (n, k // int(self.group))

    def checkpoint(self, n, k):
        """Layouts of weights, scales, zero_points, secondary_scale and bias
        for an (N, K) layer; None for a tensor the spec does not have."""
        scale_shape = self.scale_shape(n, k)
        zero_dtype = {"none": None, "int": "uint8", "float": self.act}
        secondary_shape = {"none": None, "tensor": (1,), "channel": (n,)}
        zero = zero_dtype[self.zero]
        secondary = secondary_shape[self.scale2]
        return {
            "weights": TensorLayout("uint32", (n, k * self.weight_bits // 32)),
            "scales": TensorLayout(self.scale, scale_shape),
            "zero_points": zero and TensorLayout(zero, scale_shape),
            "secondary_scale": secondary and TensorLayout("fp32", secondary),
            "bias": TensorLayout(self.out, (n,)) if self.bias else None,
        }


def _weight_bits(weight):
    match = re.fullmatch(r"u?int(\d)", weight)
    if match:
        return int(match.group(1))
    match = re.fullmatch(r"e(\d)m(\d)", weight)
    if match:
        return 1 + int(match.group(1)) + int(match.group(2))
    raise _errors.InvalidArgumentError(
        "spec text: weight %r is not uintN, intN or eEmM" % weight)
