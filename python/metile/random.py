"""Counter-based random numbers as in Triton: Philox 4x32 with ``n_rounds`` rounds (10 by
default) keyed by ``seed``, its counter made of ``offset`` (one counter per element).

``randint4x(seed, offset)`` gives Philox's four 32-bit outputs for the counter
(offset, 0, 0, 0) and the key (seed low 32 bits, seed high 32 bits); ``randint`` the first
of them; ``rand`` maps it to a float in [0, 1) (the 24 high bits over 2^24; never 1);
``randn`` a standard normal by the Box-Muller transform of the first two outputs. The same
seed and offsets give the same numbers on every target; tests check them bit for bit
against a numpy implementation.
"""

import math

from . import dtypes
from .errors import user_error
from .frames import user_location
from .values import Value, as_value, cast, is_number

PHILOX_KEY_A = 0x9E3779B9
PHILOX_KEY_B = 0xBB67AE85
PHILOX_ROUND_A = 0xD2511F53
PHILOX_ROUND_B = 0xCD9E8D57


def _u32(x, op):
    if is_number(x):
        return as_value(int(x) & 0xFFFFFFFF, op, "u32")
    x = as_value(x, op)
    if not dtypes.is_integer(x.dtype):
        raise user_error(f"metile.{op}: seed and offset are integers, got {x.type}",
                         user_location())
    return cast(x, "u32") if x.dtype != "u32" else x


def _mul_hi_lo(a, constant):
    """(high, low) 32-bit halves of the 64-bit product of the u32 ``a`` and a constant, from
    16-bit pieces (u32 arithmetic wraps, so every partial product is exact)."""
    a_lo, a_hi = a & 0xFFFF, a >> 16
    b_lo, b_hi = constant & 0xFFFF, constant >> 16
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    middle = (lo_lo >> 16) + (hi_lo & 0xFFFF) + (lo_hi & 0xFFFF)
    high = a_hi * b_hi + (hi_lo >> 16) + (lo_hi >> 16) + (middle >> 16)
    return high, a * constant


def _key(seed):
    """The Philox key: the seed's low and high 32 bits (an i32 seed is sign-extended)."""
    if is_number(seed):
        return _u32(int(seed) & 0xFFFFFFFF, "rand"), _u32(int(seed) >> 32 & 0xFFFFFFFF, "rand")
    seed = as_value(seed, "rand")
    if seed.dtype == "i64":
        return _u32(seed & 0xFFFFFFFF, "rand"), _u32(seed >> 32, "rand")
    high = seed >> 31 if seed.dtype == "i32" else seed * 0
    return _u32(seed, "rand"), _u32(high, "rand")


def _philox(seed, c0, c1, c2, c3, n_rounds):
    k0, k1 = _key(seed)
    for _ in range(n_rounds):
        a, b = c0, c2
        hi_b, lo_b = _mul_hi_lo(b, PHILOX_ROUND_B)
        hi_a, lo_a = _mul_hi_lo(a, PHILOX_ROUND_A)
        c0 = hi_b ^ c1 ^ k0
        c2 = hi_a ^ c3 ^ k1
        c1, c3 = lo_b, lo_a
        k0 = k0 + PHILOX_KEY_A
        k1 = k1 + PHILOX_KEY_B
    return c0, c1, c2, c3


def _check_rounds(n_rounds):
    if not isinstance(n_rounds, int) or n_rounds <= 0:
        raise user_error(f"metile.rand: n_rounds is a positive Python int, got {n_rounds!r}",
                         user_location())


def randint4x(seed, offset, n_rounds=10):
    """Philox's four u32 outputs for each element of ``offset``."""
    _check_rounds(n_rounds)
    offset = _u32(offset, "randint4x")
    zero = offset * 0
    return _philox(seed, offset, zero, zero, zero, n_rounds)


def randint(seed, offset, n_rounds=10):
    """A random u32 for each element of ``offset`` (the first Philox output)."""
    return randint4x(seed, offset, n_rounds)[0]


def _uniform(bits):
    """u32 random bits to a float in [0, 1): the 24 high bits times 2^-24."""
    return cast(bits >> 8, "f32") * (1.0 / (1 << 24))


def rand(seed, offset, n_rounds=10):
    """A uniform random f32 in [0, 1) for each element of ``offset``."""
    return _uniform(randint(seed, offset, n_rounds))


def randn(seed, offset, n_rounds=10):
    """A standard normal random f32 for each element of ``offset`` (Box-Muller)."""
    from .language import cos, log, sqrt

    c0, c1, _, _ = randint4x(seed, offset, n_rounds)
    u1 = 1.0 - _uniform(c0)  # in (0, 1]: log is finite
    u2 = _uniform(c1)
    return sqrt(-2.0 * log(u1)) * cos((2.0 * math.pi) * u2)
