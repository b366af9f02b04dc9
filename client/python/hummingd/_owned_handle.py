"""The lifetime of a C handle a Python object owns (client, kernel set,
layer): freed by close(), at the end of a with block, or when the object is
collected, whichever comes first; any use after close() raises.

ctypes releases the GIL during a C call, so another thread may call close()
while a call on the handle is still inside C. The C ABI forbids destroying
a handle during another call on it (hummingd.h), so close() only marks the
object closed and the handle is freed by whoever finishes last: close()
itself when nothing is in flight, else the last call to leave C."""

import contextlib
import threading
import weakref

from . import _errors


class OwnedHandle:
    """Mixin: the subclass's __init__ calls ``self._own(handle, free)`` and
    names itself in ``_WHAT`` for the error a closed handle raises; every C
    call on the handle runs inside ``with self._using() as handle``."""

    _WHAT = "handle"

    def _own(self, handle, free):
        """Takes ownership of ``handle``, released with ``free(handle)``
        once (close() or collection, after any call in flight)."""
        self._handle = handle
        self._lock = threading.Lock()
        self._in_flight = 0
        self._closed = False
        self._finalizer = weakref.finalize(self, free, handle)

    @property
    def closed(self):
        return self._closed or not self._finalizer.alive

    @property
    def handle(self):
        """The C handle (a ctypes.c_void_p); FailedPreconditionError once
        closed. Nothing keeps it alive past this call: code that passes it
        to C itself must not close this object meanwhile."""
        with self._using() as handle:
            return handle

    @contextlib.contextmanager
    def _using(self):
        """The live handle, which stays allocated until the block ends even
        if another thread calls close() meanwhile; FailedPreconditionError
        once closed. Blocks may nest (the count is not per thread)."""
        with self._lock:
            if self.closed:
                raise _errors.FailedPreconditionError("%s: closed" % self._WHAT)
            self._in_flight += 1
        try:
            yield self._handle
        finally:
            with self._lock:
                self._in_flight -= 1
                free = self._closed and self._in_flight == 0
            if free:
                self._finalizer()

    def close(self):
        """Frees the C handle now, or when the last call on it in another
        thread returns; later calls on this object raise."""
        with self._lock:
            self._closed = True
            free = self._in_flight == 0
        # Outside the lock: freeing may take a while (a layer waits for its
        # pending work) and a finalizer runs at most once anyway.
        if free:
            self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
