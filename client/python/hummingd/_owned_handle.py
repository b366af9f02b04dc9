"""The lifetime of a C handle a Python object owns (client, kernel set,
layer): freed by close(), at the end of a with block, or when the object is
collected, whichever comes first; any use after close() raises.

ctypes releases the GIL during a C call, so another thread may call close()
while a call on the handle is still inside C. The C ABI forbids destroying
a handle during another call on it (hummingd.h), so close() marks the object
closed (new calls raise), waits until no call is in flight and frees the
handle on its own thread (the first closer's; a concurrent close() returns
only once that free is done). Never inside another thread's call: freeing a
layer (cuMemFree) synchronizes, which is illegal while that call's thread
captures a CUDA graph, and forward() is capturable.

The one exception is close() from inside a call on the same handle on the
same thread (a callback, a nested use), which cannot wait for its own call:
the free is then left to that thread's outermost call, which waits for the
other threads' calls as close() would have and frees as it returns."""

import threading
import weakref

from . import _errors

_get_ident = threading.get_ident


class _HandleState:
    """A handle and the calls using it, shared by its owner and the owner's
    finalizer (which must not reference the owner). Each call enters it as
    a ``with`` block: a plain class, since a @contextlib.contextmanager
    generator costs about three times as much per call (~1.6 us against
    ~0.5 us), on forward()'s hot path."""

    __slots__ = ("handle", "what", "lock", "condition", "calls", "closed",
                 "deferred_to", "release", "freeing", "freed")

    def __init__(self, handle, what):
        self.handle = handle
        self.what = what
        # Calls take the bare lock (a Condition's own "with" is a Python
        # call more); close() waits on the condition over it.
        self.lock = threading.Lock()
        self.condition = threading.Condition(self.lock)
        # Calls in flight, per thread ident: close() must know whether its
        # own thread is inside one (it cannot wait for that one).
        self.calls = {}
        self.closed = False
        # The thread whose outermost call frees the handle, when close()
        # was called from inside a call (else None).
        self.deferred_to = None
        self.release = None  # frees the handle once (a weakref.finalize)
        # The first closer frees; any other waits for it to finish, so that
        # close() returning always means the handle is gone.
        self.freeing = False
        self.freed = False

    # acquire / try / finally rather than "with self.lock": a few tenths of
    # a microsecond less per call.
    def __enter__(self):
        ident = _get_ident()
        lock = self.lock
        lock.acquire()
        try:
            if self.closed:
                raise _errors.FailedPreconditionError("%s: closed" % self.what)
            calls = self.calls
            calls[ident] = calls.get(ident, 0) + 1
        finally:
            lock.release()
        return self.handle

    def __exit__(self, exc_type, exc, traceback):
        ident = _get_ident()
        lock = self.lock
        lock.acquire()
        try:
            calls = self.calls
            left = calls[ident] - 1
            if left:
                calls[ident] = left
                return False
            del calls[ident]
            if not self.closed:
                return False
            if not calls:  # close() may be waiting for this call
                self.condition.notify_all()
            if self.deferred_to != ident:
                return False
            # The outermost call of a thread that closed the handle from
            # inside it: finish that close().
            self.deferred_to = None
            self.condition.wait_for(lambda: not self.calls)
        finally:
            lock.release()
        self._free_once()
        return False

    def close(self):
        ident = threading.get_ident()
        with self.condition:
            self.closed = True
            if ident in self.calls:
                self.deferred_to = ident
                return
            self.condition.wait_for(lambda: not self.calls)
        self._free_once()

    def _free_once(self):
        """Frees the handle on this thread, or waits until the thread that
        began freeing it has finished (weakref.finalize alone would return
        at once to a second caller, before the free is done)."""
        with self.condition:
            if self.freeing:
                self.condition.wait_for(lambda: self.freed)
                return
            self.freeing = True
        try:
            # Outside the lock: freeing may take a while (a layer waits for
            # its pending work).
            self.release()
        finally:
            with self.condition:
                self.freed = True
                self.condition.notify_all()


def _free(state, free):
    """The finalizer's callback, from close() (no call in flight then), the
    garbage collector (none: a call keeps its owner alive) or the
    interpreter's exit. Marks the handle closed so that later calls raise;
    at exit, a call another thread is still in keeps its handle, which is
    then left to the process's end rather than freed under that call."""
    with state.condition:
        state.closed = True
        if state.calls:
            return
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
        once closed. Blocks may nest."""
        return self._state

    def close(self):
        """Frees the C handle, on this thread, once calls on it that other
        threads are in have returned (waiting for them); later calls on this
        object raise. From inside a call on this object, the free happens
        when this thread's outermost call returns."""
        self._state.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
