"""Triton's ``tl.extra`` namespace: ``tl.extra.cuda.libdevice`` (metile.extra.cuda.libdevice)."""

from . import cuda

__all__ = ["cuda"]
