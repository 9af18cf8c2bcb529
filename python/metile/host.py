"""Host-side helpers for grid and block arithmetic."""


def cdiv(a, b):
    """a / b rounded up: the number of blocks of size b that cover a."""
    return -(-a // b)


def next_power_of_2(n):
    """The smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()
