"""The lifetime of a C handle a Python object owns (client, kernel set,
layer): freed by close(), at the end of a with block, or when the object is
collected, whichever comes first; any use after close() raises.

ctypes releases the GIL during a C call, so another thread may call close()
while a call on the handle is still inside C. The C ABI forbids destroying
a handle during another call on it (hummingd.h), so close() only marks the
object closed and the handle is freed by whoever finishes last: close()
itself when nothing is in flight, else the last call to leave C."""

import threading
import weakref

from . import _errors


class _HandleState:
    """A handle and the calls using it. Each call enters it as a ``with``
    block: a plain class, since a @contextlib.contextmanager generator costs
    about three times as much per call (~1.6 us against ~0.5 us), on
    forward()'s hot path."""

    __slots__ = ("handle", "what", "lock", "in_flight", "closed", "release")

    def __init__(self, handle, what):
        self.handle = handle
        self.what = what
        self.lock = threading.Lock()
        self.in_flight = 0
        self.closed = False
        self.release = None  # frees the handle once (a weakref.finalize)

    def __enter__(self):
        with self.lock:
            if self.closed:
                raise _errors.FailedPreconditionError("%s: closed" % self.what)
            self.in_flight += 1
        return self.handle

    def __exit__(self, *exc):
        with self.lock:
            self.in_flight -= 1
            free = self.closed and self.in_flight == 0
        if free:
            self.release()
        return False


def _free(state, free):
    """The finalizer's callback: marks the handle closed, so that calls the
    interpreter's exit finalizes it under see it as such, and frees it."""
    with state.lock:
        state.closed = True
    free(state.handle)


class OwnedHandle:
    """Mixin: the subclass's __init__ calls ``self._own(handle, free)`` and
    names itself in ``_WHAT`` for the error a closed handle raises; every C
    call on the handle runs inside ``with self._using() as handle``."""

    _WHAT = "handle"

    def _own(self, handle, free):
        """Takes ownership of ``handle``, released with ``free(handle)``
        once (close() or collection, after any call in flight)."""
        self._handle = handle  # for __init__'s own calls, before any close
        state = _HandleState(handle, self._WHAT)
        self._state = state
        # The callback holds the state, not this object (which it outlives).
        self._finalizer = weakref.finalize(self, _free, state, free)
        state.release = self._finalizer

    @property
    def closed(self):
        return self._state.closed

    @property
    def handle(self):
        """The C handle (a ctypes.c_void_p); FailedPreconditionError once
        closed. Nothing keeps it alive past this call: code that passes it
        to C itself must not close this object meanwhile."""
        with self._state as handle:
            return handle

    def _using(self):
        """The live handle, which stays allocated until the block ends even
        if another thread calls close() meanwhile; FailedPreconditionError
        once closed. Blocks may nest (the count is not per thread)."""
        return self._state

    def close(self):
        """Frees the C handle now, or when the last call on it in another
        thread returns; later calls on this object raise."""
        state = self._state
        with state.lock:
            state.closed = True
            free = state.in_flight == 0
        # Outside the lock: freeing may take a while (a layer waits for its
        # pending work) and a finalizer runs at most once anyway.
        if free:
            self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
