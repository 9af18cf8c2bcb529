"""Triton's ``tl.math`` namespace: the elementwise math functions under the names Triton's
kernels call them by (``tl.math.exp2(x)``). Each is the top-level function of the same name;
``div_rn`` and ``sqrt_rn`` are the correctly rounded division and square root, which is what
``/`` and ``sqrt`` compute unless the kernel asks for relaxed math."""

from .elementwise import ceil, erf, floor, fma, log2, sigmoid
from .language import abs, cos, exp, exp2, log, rsqrt, sin, sqrt, tanh


def div_rn(x, y):
    """x / y, correctly rounded."""
    return x / y


def sqrt_rn(x):
    """The correctly rounded square root of x."""
    return sqrt(x)


__all__ = ["abs", "ceil", "cos", "div_rn", "erf", "exp", "exp2", "floor", "fma", "log", "log2",
           "rsqrt", "sigmoid", "sin", "sqrt", "sqrt_rn", "tanh"]
