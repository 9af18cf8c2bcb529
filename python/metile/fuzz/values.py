"""The values a generated program names, and the shape and literal rules its statements share."""

import numpy as np

from .reference import FLOATS, INTEGERS

BUFFER_DTYPES = FLOATS + INTEGERS


class Val:
    def __init__(self, name, dtype, shape, data=None):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)
        self.data = data  # a load of "nonzero" or "shift" data (0..31): raw divisors and amounts


def broadcast(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def literal(value):
    return repr(float(value)) if isinstance(value, float) else str(int(value))
