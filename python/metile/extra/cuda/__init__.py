"""Triton's ``tl.extra.cuda``: its ``libdevice`` module of math functions."""

from . import libdevice

__all__ = ["libdevice"]
