"""Helpers for grid and block arithmetic, on the host and (cdiv) inside kernels."""


def cdiv(a, b):
    """a / b rounded up (b > 0): the number of blocks of size b that cover a. Works on
    Python integers and, inside a kernel, on traced integers (Triton's tl.cdiv)."""
    from .values import Value, binary

    if isinstance(a, Value) or isinstance(b, Value):
        return -binary("floordiv", -a, b)  # rounding down, whatever `//` does on tiles
    return -(-a // b)


def next_power_of_2(n):
    """The smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()
