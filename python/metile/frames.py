"""Where in the user's program the tracer is: the innermost frame outside this package."""

import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_frame():
    """The innermost frame whose code is not part of metile, or None."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    return frame


def user_location():
    """(file, line) of the user's code calling into metile, or (None, None)."""
    frame = user_frame()
    if frame is None:
        return None, None
    return frame.f_code.co_filename, frame.f_lineno
