"""The status -> exception conversion, against the library's own names for
every code (hummingd_status_name), so the Python table cannot drift from
hummingd.h."""

import unittest

import hummingd
from hummingd import _errors, _library


class StatusErrorTest(unittest.TestCase):

    def test_every_code_has_its_class_and_the_librarys_name(self):
        lib = _library.library()
        classes = {
            1: hummingd.CancelledError, 2: hummingd.UnknownError,
            3: hummingd.InvalidArgumentError,
            4: hummingd.DeadlineExceededError, 5: hummingd.NotFoundError,
            6: hummingd.AlreadyExistsError, 7: hummingd.PermissionDeniedError,
            8: hummingd.ResourceExhaustedError,
            9: hummingd.FailedPreconditionError, 10: hummingd.AbortedError,
            11: hummingd.OutOfRangeError, 12: hummingd.UnimplementedError,
            13: hummingd.InternalError, 14: hummingd.UnavailableError,
            15: hummingd.DataLossError, 16: hummingd.UnauthenticatedError}
        for code, cls in classes.items():
            with self.subTest(code=code):
                error = _errors.status_error(code, "what happened")
                self.assertIs(type(error), cls)
                self.assertIsInstance(error, hummingd.Error)
                self.assertEqual(error.code, code)
                self.assertEqual(error.code_name,
                                 lib.hummingd_status_name(code).decode())
                self.assertEqual(error.message, "what happened")
                self.assertEqual(str(error),
                                 "%s: what happened" % error.code_name)

    def test_a_code_without_a_class_keeps_its_number(self):
        error = _errors.status_error(42, "from a newer library")
        self.assertIs(type(error), hummingd.Error)
        self.assertEqual((error.code, error.code_name), (42, "CODE_42"))

    def test_ok_is_not_an_error_and_empty_messages_say_so(self):
        with self.assertRaises(ValueError):
            _errors.status_error(0, "")
        self.assertEqual(_errors.status_error(13, "").message,
                         "(the library gave no message)")


if __name__ == "__main__":
    unittest.main()
