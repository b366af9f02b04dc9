"""Exceptions of the Python SDK: one class per status code of the C ABI.

The C ABI numbers its codes as absl::StatusCode (hummingd.h); each becomes an
exception class here so callers catch by meaning (``UnavailableError``) or
catch everything with ``hummingd.Error``. ``status_error`` is the one place a
C status turns into an exception (STYLE.md: each foreign error converts in
exactly one function).
"""


class Error(Exception):
    """A failed hummingd call: ``code`` (int), ``code_name``, ``message``."""

    __module__ = "hummingd"

    code = 2
    code_name = "UNKNOWN"

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None and code != type(self).code:
            # A code this package has no class for (a newer library).
            self.code = code
            self.code_name = "CODE_%d" % code

    def __str__(self):
        return "%s: %s" % (self.code_name, self.message)


def _error_class(name, code, code_name, doc):
    return type(name, (Error,), {"code": code, "code_name": code_name,
                                 "__doc__": doc, "__module__": "hummingd"})


CancelledError = _error_class("CancelledError", 1, "CANCELLED",
                              "The operation was cancelled.")
UnknownError = _error_class("UnknownError", 2, "UNKNOWN",
                            "An error with no better code.")
InvalidArgumentError = _error_class(
    "InvalidArgumentError", 3, "INVALID_ARGUMENT",
    "A bad request; the message names the field and the rule.")
DeadlineExceededError = _error_class("DeadlineExceededError", 4,
                                     "DEADLINE_EXCEEDED",
                                     "The call ran past its deadline.")
NotFoundError = _error_class("NotFoundError", 5, "NOT_FOUND",
                             "Something named by the call does not exist.")
AlreadyExistsError = _error_class("AlreadyExistsError", 6, "ALREADY_EXISTS",
                                  "Something the call creates exists.")
PermissionDeniedError = _error_class("PermissionDeniedError", 7,
                                     "PERMISSION_DENIED",
                                     "The caller may not do this.")
ResourceExhaustedError = _error_class("ResourceExhaustedError", 8,
                                      "RESOURCE_EXHAUSTED",
                                      "A limit was reached.")
FailedPreconditionError = _error_class(
    "FailedPreconditionError", 9, "FAILED_PRECONDITION",
    "The system is not in a state for this call (no GPU or driver, an "
    "unsupported arch, a locked cache directory, a closed client).")
AbortedError = _error_class("AbortedError", 10, "ABORTED",
                            "The operation was aborted.")
OutOfRangeError = _error_class("OutOfRangeError", 11, "OUT_OF_RANGE",
                               "An index or value past its valid range.")
UnimplementedError = _error_class("UnimplementedError", 12, "UNIMPLEMENTED",
                                  "Not supported (yet).")
InternalError = _error_class(
    "InternalError", 13, "INTERNAL",
    "A bug or a compiler failure; the message carries the log.")
UnavailableError = _error_class(
    "UnavailableError", 14, "UNAVAILABLE",
    "The daemon does not answer; the message names the socket.")
DataLossError = _error_class("DataLossError", 15, "DATA_LOSS",
                             "A corrupt cache value or cubin.")
UnauthenticatedError = _error_class("UnauthenticatedError", 16,
                                    "UNAUTHENTICATED",
                                    "The caller is not authenticated.")

_BY_CODE = {cls.code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError,
    NotFoundError, AlreadyExistsError, PermissionDeniedError,
    ResourceExhaustedError, FailedPreconditionError, AbortedError,
    OutOfRangeError, UnimplementedError, InternalError, UnavailableError,
    DataLossError, UnauthenticatedError)}


def status_error(status, message):
    """The exception for a non-OK ``hummingd_status`` and its message.

    A code without a class here (from a newer library) becomes a plain
    ``Error`` that keeps the number, rather than being mislabelled.
    """
    status = int(status)
    if status == 0:
        raise ValueError("status_error: status 0 (OK) is not an error")
    if not message:
        message = "(the library gave no message)"
    cls = _BY_CODE.get(status)
    if cls is None:
        return Error(message, code=status)
    return cls(message)
