"""close() while another thread is inside a C call on the same handle: the
handle is freed only after that call returned (hummingd.h forbids
destroying a handle during another call on it), on the closing thread (a
layer's free synchronizes, which must not happen inside another thread's
forward, since that may be capturing a CUDA graph), and later calls raise
the closed-handle error. Stand-in libraries that block inside "C" replace
the real one; no library or GPU needed."""

import ctypes
import threading
import time
import unittest
from unittest import mock

import hummingd
from hummingd import _library
from test_layer_checks import StandInClient, good_tensors, stand_in_set

X_POINTER, Y_POINTER = 0x7f0000010000, 0x7f0000020000
WAIT_S = 10


class BlockingLayerLibrary:
    """Layer calls; forward(m) blocks in "C" until release(m)."""

    def __init__(self):
        self.events = []
        self.destroyed = 0
        self.destroy_threads = []  # threading.get_ident() of each destroy
        self.on_forward = None  # called inside forward, as C code may call
        self._lock = threading.Lock()
        self._inside = {}
        self._release = {}

    def _event(self, text):
        with self._lock:
            self.events.append(text)

    def gate(self, m):
        self._inside[m] = threading.Event()
        self._release[m] = threading.Event()
        return self._inside[m], self._release[m]

    def hummingd_layer_create(self, *args):
        return 0

    def hummingd_layer_forward(self, handle, x, y, m, stream):
        self._event("forward %d enters C" % m)
        if self.on_forward is not None:
            self.on_forward()
        if m in self._inside:
            self._inside[m].set()
            if not self._release[m].wait(WAIT_S):
                self._event("forward %d never released" % m)
        self._event("forward %d leaves C" % m)
        return 0

    def hummingd_layer_destroy(self, handle):
        self._event("destroy")
        self.destroyed += 1
        self.destroy_threads.append(threading.get_ident())

    def hummingd_layer_last_error(self, handle):
        return b""


class ForwardThread(threading.Thread):
    def __init__(self, layer, m):
        super().__init__()
        self.layer, self.m, self.error = layer, m, None

    def run(self):
        try:
            self.layer.forward(X_POINTER, Y_POINTER, m=self.m)
        except Exception as error:  # reported by the test
            self.error = error


class CloseThread(threading.Thread):
    """Calls ``owner.close()``, which waits for calls in flight."""

    def __init__(self, owner):
        super().__init__()
        self.owner, self.error, self.ident_seen = owner, None, None

    def run(self):
        self.ident_seen = threading.get_ident()
        try:
            self.owner.close()
        except Exception as error:  # reported by the test
            self.error = error


def start_close(test, owner):
    """A CloseThread, once it has marked ``owner`` closed."""
    closer = CloseThread(owner)
    closer.start()
    deadline = time.monotonic() + WAIT_S
    while not owner.closed and time.monotonic() < deadline:
        time.sleep(0.001)
    test.assertTrue(owner.closed, "close() never marked the object closed")
    return closer


class LayerCloseDuringForwardTest(unittest.TestCase):

    def setUp(self):
        self.library = BlockingLayerLibrary()
        patcher = mock.patch.object(_library, "library",
                                    return_value=self.library)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.layer = hummingd.QuantizedLinear(
            StandInClient(), stand_in_set(max_m=8), **good_tensors())

    def start_blocked_forward(self, m):
        inside, release = self.library.gate(m)
        thread = ForwardThread(self.layer, m)
        thread.start()
        self.assertTrue(inside.wait(WAIT_S), "forward %d never reached C" % m)
        return thread, release

    def test_close_waits_for_the_forward_in_c_and_frees_on_its_thread(self):
        thread, release = self.start_blocked_forward(1)
        closer = start_close(self, self.layer)
        self.assertEqual(self.library.destroyed, 0,
                         "close() freed the layer under a running forward")
        with self.assertRaisesRegex(hummingd.FailedPreconditionError,
                                    "layer: closed"):
            self.layer.forward(X_POINTER, Y_POINTER, m=2)
        self.assertTrue(closer.is_alive(),
                        "close() returned while a forward was in C")
        release.set()
        thread.join(WAIT_S)
        closer.join(WAIT_S)
        self.assertFalse(closer.is_alive(), "close() never returned")
        self.assertIsNone(thread.error)
        self.assertIsNone(closer.error)
        self.assertEqual(self.library.events,
                         ["forward 1 enters C", "forward 1 leaves C",
                          "destroy"])
        # Not inside the forward's thread (it may be capturing a graph).
        self.assertEqual(self.library.destroy_threads, [closer.ident_seen])

    def test_close_waits_for_every_forward(self):
        first, release_first = self.start_blocked_forward(1)
        second, release_second = self.start_blocked_forward(2)
        closer = start_close(self, self.layer)
        release_first.set()
        first.join(WAIT_S)
        self.assertEqual(self.library.destroyed, 0,
                         "freed while forward 2 was still in C")
        self.assertTrue(closer.is_alive())
        release_second.set()
        second.join(WAIT_S)
        closer.join(WAIT_S)
        self.assertIsNone(first.error)
        self.assertIsNone(second.error)
        self.assertEqual(self.library.events[-2:],
                         ["forward 2 leaves C", "destroy"])
        self.assertEqual(self.library.destroy_threads, [closer.ident_seen])

    def test_close_from_inside_a_call_frees_as_that_call_returns(self):
        # close() cannot wait for its own thread's call: the free is left to
        # that call's exit, on the same thread.
        def close_inside():
            self.layer.close()
            self.library.events.append("close returned")
        self.library.on_forward = close_inside
        thread = ForwardThread(self.layer, 1)
        thread.start()
        thread.join(WAIT_S)
        self.assertFalse(thread.is_alive(), "close() inside a call hung")
        self.assertIsNone(thread.error)
        self.assertEqual(self.library.events,
                         ["forward 1 enters C", "close returned",
                          "forward 1 leaves C", "destroy"])
        self.assertEqual(self.library.destroy_threads, [thread.ident])

    def test_the_exit_finalizer_leaves_a_handle_in_use_alone(self):
        # What the interpreter's exit runs for a client or a kernel set
        # (weakref.finalize with atexit): a call still in C keeps the
        # handle, which the process's end then takes.
        thread, release = self.start_blocked_forward(1)
        self.layer._finalizer()
        self.assertTrue(self.layer.closed)
        release.set()
        thread.join(WAIT_S)
        self.assertIsNone(thread.error)
        self.assertEqual(self.library.destroyed, 0)
        with self.assertRaisesRegex(hummingd.FailedPreconditionError,
                                    "layer: closed"):
            self.layer.forward(X_POINTER, Y_POINTER, m=2)

    def test_a_second_close_returns_only_once_the_handle_is_freed(self):
        # Two closers at once: one frees, and the other must not return
        # before that free is done (a caller may destroy its CUDA context
        # right after close()).
        freeing, finish = threading.Event(), threading.Event()
        destroy = self.library.hummingd_layer_destroy

        def slow_destroy(handle):
            freeing.set()
            finish.wait(WAIT_S)
            destroy(handle)
        self.library.hummingd_layer_destroy = slow_destroy
        # A layer made after the swap (a layer takes its free at creation).
        self.layer.close()
        self.library.destroyed = 0
        self.layer = hummingd.QuantizedLinear(
            StandInClient(), stand_in_set(max_m=8), **good_tensors())
        first = CloseThread(self.layer)
        first.start()
        self.assertTrue(freeing.wait(WAIT_S), "close() never freed")
        second = CloseThread(self.layer)
        second.start()
        second.join(0.2)
        self.assertTrue(second.is_alive(),
                        "a second close() returned during the first's free")
        finish.set()
        first.join(WAIT_S)
        second.join(WAIT_S)
        self.assertFalse(second.is_alive(), "the second close() never returned")
        self.assertIsNone(first.error)
        self.assertIsNone(second.error)
        self.assertEqual(self.library.destroyed, 1)

    def test_close_with_nothing_in_flight_frees_at_once(self):
        self.layer.forward(X_POINTER, Y_POINTER, m=3)
        self.layer.close()
        self.assertEqual(self.library.destroyed, 1)
        self.assertEqual(self.library.destroy_threads,
                         [threading.get_ident()])
        self.layer.close()
        self.assertEqual(self.library.destroyed, 1)
        with self.assertRaisesRegex(hummingd.FailedPreconditionError,
                                    "layer: closed"):
            self.layer.forward(X_POINTER, Y_POINTER, m=3)


class BlockingClientLibrary:
    """Client calls; resolve fails with INVALID_ARGUMENT after blocking."""

    HANDLE = 0x5151

    def __init__(self):
        self.events = []
        self.destroy_threads = []
        self.inside = threading.Event()
        self.release = threading.Event()

    def hummingd_client_create(self, mode, socket, cache_dir, out, error,
                               size):
        out._obj.value = self.HANDLE
        return 0

    def hummingd_client_mode(self, handle):
        return _library.MODE_EMBEDDED

    def hummingd_resolve_max_m(self, handle, *args):
        self.events.append("resolve enters C")
        self.inside.set()
        self.release.wait(WAIT_S)
        self.events.append("resolve leaves C")
        return 3

    def hummingd_client_last_error(self, handle):
        self.events.append("last_error")
        return b"spec: stand-in refusal"

    def hummingd_client_destroy(self, handle):
        value = handle.value if isinstance(handle, ctypes.c_void_p) else handle
        self.events.append("destroy" if value == self.HANDLE
                           else "destroy of another handle %r" % (value,))
        self.destroy_threads.append(threading.get_ident())


class ClientCloseDuringResolveTest(unittest.TestCase):

    def test_the_message_is_read_before_the_client_is_freed(self):
        library = BlockingClientLibrary()
        with mock.patch.object(_library, "library", return_value=library):
            client = hummingd.Client(mode="embedded")
        outcome = {}

        def resolve():
            try:
                client.resolve("weight=uint4", 256, 256, "sm_90a")
            except hummingd.Error as error:
                outcome["error"] = error

        thread = threading.Thread(target=resolve)
        thread.start()
        self.assertTrue(library.inside.wait(WAIT_S))
        closer = start_close(self, client)
        self.assertNotIn("destroy", library.events)
        self.assertIn("closed", repr(client))
        library.release.set()
        thread.join(WAIT_S)
        closer.join(WAIT_S)
        self.assertIsNone(closer.error)
        self.assertEqual(library.destroy_threads, [closer.ident_seen])
        # The call's own error, with the message kept for its thread, not
        # "client: closed" nor a message read from a freed client.
        self.assertIsInstance(outcome.get("error"),
                              hummingd.InvalidArgumentError)
        self.assertEqual(outcome["error"].message, "spec: stand-in refusal")
        self.assertEqual(library.events, ["resolve enters C",
                                          "resolve leaves C", "last_error",
                                          "destroy"])
        with self.assertRaisesRegex(hummingd.FailedPreconditionError,
                                    "client: closed"):
            client.resolve("weight=uint4", 256, 256, "sm_90a")


if __name__ == "__main__":
    unittest.main()
