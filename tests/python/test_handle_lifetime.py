"""close() while another thread is inside a C call on the same handle: the
handle is freed only after that call returned (hummingd.h forbids
destroying a handle during another call on it), and later calls raise the
closed-handle error. Stand-in libraries that block inside "C" replace the
real one; no library or GPU needed."""

import ctypes
import threading
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
        if m in self._inside:
            self._inside[m].set()
            if not self._release[m].wait(WAIT_S):
                self._event("forward %d never released" % m)
        self._event("forward %d leaves C" % m)
        return 0

    def hummingd_layer_destroy(self, handle):
        self._event("destroy")
        self.destroyed += 1

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

    def test_the_layer_is_freed_after_the_forward_in_c_returns(self):
        thread, release = self.start_blocked_forward(1)
        self.layer.close()
        self.assertEqual(self.library.destroyed, 0,
                         "close() freed the layer under a running forward")
        self.assertTrue(self.layer.closed)
        with self.assertRaisesRegex(hummingd.FailedPreconditionError,
                                    "layer: closed"):
            self.layer.forward(X_POINTER, Y_POINTER, m=2)
        release.set()
        thread.join(WAIT_S)
        self.assertIsNone(thread.error)
        self.assertEqual(self.library.events,
                         ["forward 1 enters C", "forward 1 leaves C",
                          "destroy"])

    def test_the_last_of_several_forwards_frees_it(self):
        first, release_first = self.start_blocked_forward(1)
        second, release_second = self.start_blocked_forward(2)
        self.layer.close()
        release_first.set()
        first.join(WAIT_S)
        self.assertEqual(self.library.destroyed, 0,
                         "freed while forward 2 was still in C")
        release_second.set()
        second.join(WAIT_S)
        self.assertIsNone(first.error)
        self.assertIsNone(second.error)
        self.assertEqual(self.library.destroyed, 1)
        self.assertEqual(self.library.events[-2:],
                         ["forward 2 leaves C", "destroy"])

    def test_close_with_nothing_in_flight_frees_at_once(self):
        self.layer.forward(X_POINTER, Y_POINTER, m=3)
        self.layer.close()
        self.assertEqual(self.library.destroyed, 1)
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
        client.close()
        self.assertNotIn("destroy", library.events)
        self.assertIn("closed", repr(client))
        library.release.set()
        thread.join(WAIT_S)
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
