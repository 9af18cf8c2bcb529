"""The statements of a generated program that reduce, scan or reshape a value
(``programs.Program`` mixes them in); each returns the new Val, or None when the pool has no
operand for it."""

import numpy as np

from . import reference as ref
from .values import broadcast


class ShapeOps:
    def _op_reduce(self):
        kind = self.choice(["sum", "sum", "max", "min", "argmax", "argmin"])
        a = self.pick(lambda v: len(v.shape) >= 1 and (kind == "sum" or v.dtype != "i1"))
        if a is None:
            return None
        axes = [0] + ([1] if len(a.shape) == 2 else []) + ([] if kind.startswith("arg") else [None])
        axis = self.choice(axes)
        keep_dims = bool(self.rng.random() < 0.3)
        if axis is None:
            shape = (1,) * len(a.shape) if keep_dims else ()
        else:
            shape = tuple(1 if i == axis else d for i, d in enumerate(a.shape)) if keep_dims else (
                tuple(d for i, d in enumerate(a.shape) if i != axis))
        if kind == "sum":
            dtype = ref.SUM_DTYPE.get(a.dtype, a.dtype)
        else:
            dtype = "i32" if kind.startswith("arg") else a.dtype
        keep = ", keep_dims=True" if keep_dims else ""
        spelling = self.rng.random()
        if spelling < 0.4:
            source = f"metile.{kind}({a.name}, axis={axis}{keep})"
        elif spelling < 0.7:
            source = f"{a.name}.{kind}({axis}{keep})"
        else:
            source = f"metile.{kind}({a.name}, {axis}{keep})"

        return self.value(source, dtype, shape,
                          lambda env, ctx: ref.reduce(kind, env[a.name], axis, keep_dims))

    def _op_scan(self):
        kind = self.choice(["cumsum", "cumsum", "cumprod"])
        a = self.pick(lambda v: len(v.shape) >= 1 and (kind == "cumsum" or v.dtype != "i1"))
        if a is None:
            return None
        axis = int(self.rng.integers(0, len(a.shape)))
        dtype = "i32" if a.dtype == "i1" else a.dtype
        return self.value(f"metile.{kind}({a.name}, axis={axis})", dtype, a.shape,
                          lambda env, ctx: ref.scan(kind, env[a.name], axis))

    def _op_expand(self):
        a = self.pick(lambda v: len(v.shape) == 1)
        if a is None:
            return None
        axis = int(self.rng.integers(0, 2))
        source = self.choice([f"{a.name}[:, None]" if axis == 1 else f"{a.name}[None, :]",
                              f"metile.expand_dims({a.name}, {axis})"])
        shape = a.shape + (1,) if axis == 1 else (1,) + a.shape

        def compute(env, ctx):
            x = env[a.name]
            return ref.R(x.dtype, np.expand_dims(x.v, axis), np.expand_dims(x.e, axis),
                         np.expand_dims(x.u, axis))

        return self.value(source, a.dtype, shape, compute)

    def _op_broadcast(self):
        a = self.pick(lambda v: len(v.shape) >= 1 and v.shape != self.tile and broadcast(
            v.shape, self.tile) == self.tile)
        if a is None:
            return None

        def compute(env, ctx):
            x = env[a.name]
            return ref.R(x.dtype, np.broadcast_to(x.v, self.tile), x.e, x.u)

        return self.value(f"metile.broadcast_to({a.name}, ({self.BM}, {self.BN}))", a.dtype,
                          self.tile, compute)

    def _op_trans(self):
        a = self.pick(lambda v: len(v.shape) == 2)
        if a is None:
            return None
        source = self.choice([f"metile.trans({a.name})", f"{a.name}.T",
                              f"metile.permute({a.name}, (1, 0))"])

        def compute(env, ctx):
            x = env[a.name]
            return ref.R(x.dtype, x.v.T, x.e.T, x.u.T)

        return self.value(source, a.dtype, a.shape[::-1], compute)
