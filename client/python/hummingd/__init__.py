"""hummingd: quantized GEMM kernels from the node's kernel service.

A pure-Python SDK over the C++ client's C ABI (libhummingd_client.so, loaded
with ctypes on first use; see _library.py for where it is looked for):

    with hummingd.Client() as client:
        kernel_set = client.resolve("weight=uint4,group=128,scale=fp16",
                                    n=4096, k=4096, gpu="sm_90a", max_m=64)
        layer = hummingd.QuantizedLinear(client, kernel_set, weights=qweight,
                                         scales=scales)
        layer.forward(x, y)

Every failure is a ``hummingd.Error`` subclass named after its status code.
"""

from ._errors import (AbortedError, AlreadyExistsError, CancelledError,
                      DataLossError, DeadlineExceededError, Error,
                      FailedPreconditionError, InternalError,
                      InvalidArgumentError, NotFoundError, OutOfRangeError,
                      PermissionDeniedError, ResourceExhaustedError,
                      UnauthenticatedError, UnavailableError,
                      UnimplementedError, UnknownError)
from .client import Client
from .kernel_set import Kernel, KernelSet, LaunchParams
from .layer import QuantizedLinear, dequantize
from .spec import Spec

__version__ = "0.1.0"

__all__ = [
    "AbortedError", "AlreadyExistsError", "CancelledError", "Client",
    "DataLossError", "DeadlineExceededError", "Error",
    "FailedPreconditionError", "InternalError", "InvalidArgumentError",
    "Kernel", "KernelSet", "LaunchParams", "NotFoundError", "OutOfRangeError",
    "PermissionDeniedError", "QuantizedLinear", "ResourceExhaustedError",
    "Spec", "UnauthenticatedError", "UnavailableError", "UnimplementedError",
    "UnknownError", "dequantize",
]
