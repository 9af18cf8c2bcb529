"""Triton's ``tl.extra.cuda.libdevice``: the functions of CUDA's libdevice that Triton kernels
call, under their libdevice names, as meTile's elementwise functions of the same meaning (on
every target). A libdevice function meTile does not have is an AttributeError naming this
module, as any missing attribute is."""

from ...elementwise import ceil, erf, floor, fma, log2
from ...language import abs, cos, exp, exp2, log, rsqrt, sin, sqrt, tanh
from ...math import div_rn, sqrt_rn

fabs = abs


def pow(x, y):
    """x ** y for x > 0, as exp2(y * log2(x))."""
    return exp2(y * log2(x))


def fast_expf(x):
    """exp(x), as libdevice's fast_expf: meTile's exp, which relaxed math may approximate."""
    return exp(x)


__all__ = ["abs", "ceil", "cos", "div_rn", "erf", "exp", "exp2", "fabs", "fast_expf", "floor",
           "fma", "log", "log2", "pow", "rsqrt", "sin", "sqrt", "sqrt_rn", "tanh"]
