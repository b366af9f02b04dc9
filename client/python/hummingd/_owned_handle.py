"""The lifetime of a C handle a Python object owns (client, kernel set,
layer): freed by close(), at the end of a with block, or when the object is
collected, whichever comes first; any use after that raises."""

from . import _errors


class OwnedHandle:
    """Mixin: the subclass's __init__ sets ``self._handle`` and
    ``self._finalizer`` (a weakref.finalize that frees it) and names itself
    in ``_WHAT`` for the error a closed handle raises."""

    _WHAT = "handle"

    @property
    def handle(self):
        """The C handle (a ctypes.c_void_p); FailedPreconditionError once
        closed."""
        return self._live_handle()

    def _live_handle(self):
        if not self._finalizer.alive:
            raise _errors.FailedPreconditionError("%s: closed" % self._WHAT)
        return self._handle

    def close(self):
        """Frees the C handle now; later calls on this object raise."""
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
