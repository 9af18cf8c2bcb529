"""Random valid @metile.kernel programs, each with the numpy reference of what it computes.

A program is a 1-D kernel over a ragged length (several programs, masked loads and stores)
or a single-program 2-D kernel over a ragged M x N tile with row and column vectors. Its body
is a random sequence of elementwise operations, casts, ``where``, reductions, scans,
broadcasts, transposes and at most one device loop carrying a value, over buffers of
f16/bf16/f32/i32/u32 and booleans made from them. Each statement is emitted both as kernel
source and as a reference step (``reference.py``), so the two cannot drift apart.
Divisors, shift amounts, logarithm arguments and float-to-integer casts are guarded in the
source itself (``(b & 7) + 1``, ``b & 31``, ``abs(x) + 1.0``, a clamp), which keeps every
program free of undefined results.
"""

import numpy as np

from . import reference as ref
from .elementwise_ops import ElementwiseOps
from .program_data import ProgramData
from .reference import FLOATS, INTEGERS
from .shape_ops import ShapeOps
from .values import BUFFER_DTYPES, Val, broadcast, literal

HELPER = """
@metile.jit
def fuzz_helper(a, b):
    return a * b - a

"""


class Program(ElementwiseOps, ShapeOps, ProgramData):
    """A generated kernel: its source, launch arguments, and a reference of its outputs."""

    def __init__(self, seed):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.name = f"fuzz_kernel_{seed}"
        self.blocks = [([], [])]  # (source lines, reference steps) of the open blocks
        self.pool = []
        self.params = []  # (name, kind, dtype): kind "in", "chunks", "out" or "scalar"
        self.constexprs = {}
        self.outputs = []  # (param name, dtype, pattern)
        self.count = 0
        self.uses_helper = False
        self._generate()

    # -- emission ---------------------------------------------------------------------------

    def line(self, text, step=None):
        lines, steps = self.blocks[-1]
        lines.append(text)
        if step is not None:
            steps.append(step)

    def value(self, source, dtype, shape, compute):
        """Emit ``vN = source`` whose reference is ``compute(env, ctx)``; returns its Val."""
        name = f"v{self.count}"
        self.count += 1

        def step(env, ctx):
            env[name] = compute(env, ctx)

        self.line(f"{name} = {source}", step)
        val = Val(name, dtype, shape)
        self.pool.append(val)
        return val

    def pick(self, condition=lambda v: True):
        candidates = [v for v in self.pool if condition(v)]
        if not candidates:
            return None
        # Recent values more often, so that chains grow deep.
        weights = np.arange(1, len(candidates) + 1, dtype=float)
        return candidates[self.rng.choice(len(candidates), p=weights / weights.sum())]

    def choice(self, options):
        return options[self.rng.integers(len(options))]

    # -- the program ------------------------------------------------------------------------

    def _generate(self):
        rng = self.rng
        self.two_d = bool(rng.random() < 0.45)
        if self.two_d:
            self.BM, self.BN = (int(2 ** rng.integers(0, 6)) for _ in range(2))
            self.M, self.N = int(rng.integers(1, self.BM + 1)), int(rng.integers(1, self.BN + 1))
            if rng.random() < 0.3:  # no ragged tail: raw loaded divisors are safe
                self.M, self.N = self.BM, self.BN
            self.grid = 1
            self.constexprs.update(BM=self.BM, BN=self.BN)
            self.tile = (self.BM, self.BN)
        else:
            self.B = int(2 ** rng.integers(0, 8)) if rng.random() < 0.1 else int(
                2 ** rng.integers(2, 8))
            self.n = int(rng.integers(1, 3 * self.B + 1))
            if rng.random() < 0.3:
                self.n = self.B * int(rng.integers(1, 4))
            self.grid = -(-self.n // self.B)
            self.constexprs.update(BLOCK=self.B)
            self.tile = (self.B,)
        # No ragged tail: every element a thread owns is loaded, so raw loaded divisors and
        # shift amounts are safe (a thread that owns no element must not fault on them).
        self.full = (self.M, self.N) == self.tile if self.two_d else self.n % self.B == 0
        self.options = {}
        option = rng.random()
        if option < 0.25:
            self.options["num_warps"] = int(2 ** rng.integers(0, 4))
        elif option < 0.35:
            self.options["STRICT_MATH"] = True
        elif option < 0.45:
            self.options["RELAXED_PRECISION"] = True
        self.K = int(rng.integers(0, 5))
        self.scalars = {"n": self.n} if not self.two_d else {"M": self.M, "N": self.N}
        self.scalars.update(K=self.K, alpha=float(self.choice([0.5, -1.25, 3.0])),
                            beta=int(rng.integers(-9, 10)))
        self.inputs = {}
        self.data_kinds = {}
        self._prologue()
        for _ in range(int(rng.integers(2, 6))):
            self._load()
        loop_at = int(rng.integers(0, 12)) if rng.random() < 0.4 else -1
        for i in range(int(rng.integers(3, 13))):
            if i == loop_at:
                self._loop()
            else:
                self._operation()
        self._stores()

    def _prologue(self):
        self.line("pid = metile.program_id(0)",
                  lambda env, ctx: env.__setitem__("pid", ref.R("i32", ctx["pid"])))
        self.pool.append(Val("pid", "i32", ()))
        for name, dtype in (("alpha", "f32"), ("beta", "i32")):
            self.pool.append(Val(name, dtype, ()))
        if self.two_d:
            self.line("rows = metile.arange(0, BM)")
            self.line("cols = metile.arange(0, BN)")
            self.line("offs = rows[:, None] * N + cols[None, :]")
            self.line("mask = (rows[:, None] < M) & (cols[None, :] < N)")
        else:
            self.line("offs = pid * BLOCK + metile.arange(0, BLOCK)")
            self.line("mask = offs < n")

    def _new_param(self, kind, dtype):
        name = f"{kind}{len(self.params)}"
        self.params.append((name, kind, dtype))
        return name

    def _other(self, dtype):
        if self.rng.random() < 0.5:
            return None
        return float(self.choice([0.0, 1.0, -2.0])) if dtype in FLOATS else int(
            self.choice([0, 1, 3]))

    def _load(self):
        dtype = self.choice(BUFFER_DTYPES)
        pattern = "tile"
        if self.two_d:
            pattern = self.choice(["tile", "tile", "row", "col"])
        name = self._new_param("in", dtype)
        data = None
        if self.full and dtype in INTEGERS and self.rng.random() < 0.4:
            data = self.choice(["nonzero", "shift"])
        self.inputs[name] = (dtype, pattern)
        self.data_kinds[name] = data
        other = self._other(dtype)
        other_source = "" if other is None else f", other={literal(other)}"
        if pattern == "tile":
            source = f"metile.load({name} + offs, mask=mask{other_source})"
            shape = self.tile
        elif pattern == "row":
            source = f"metile.load({name} + cols, mask=cols < N{other_source})"
            shape = (self.BN,)
        else:
            source = f"metile.load({name} + rows, mask=rows < M{other_source})"
            shape = (self.BM,)

        def compute(env, ctx, name=name, other=other):
            data, valid = ctx["tiles"][name]
            fill = ref.convert(ref.number(0 if other is None else other,
                                          "f32" if isinstance(other, float) else "i32"), dtype)
            return ref.R(dtype, np.where(valid, data, fill.v))

        self.value(source, dtype, shape, compute).data = data

    def _operation(self):
        kinds = ["binary"] * 5 + ["number"] * 2 + ["compare"] * 2 + ["where", "cast", "cast",
                                                                     "unary", "math", "math"]
        kinds += ["reduce", "scan", "minmax", "shift", "divide", "bitwise", "fma", "clamp", "full",
                  "helper"]
        if self.two_d:
            kinds += ["expand", "broadcast", "trans"]
        for _ in range(8):
            if getattr(self, "_op_" + self.choice(kinds))():
                return

    # -- a device loop carrying one value ---------------------------------------------------

    def _loop(self):
        dtype = self.choice(BUFFER_DTYPES)
        name = self._new_param("chunks", dtype)
        self.inputs[name] = (dtype, "chunks")
        step = int(self.choice([1, 1, 2, 3]))
        start = self.pick(lambda v: v.shape == self.tile)
        carried_dtype = start.dtype if start is not None and self.rng.random() < 0.5 else "f32"
        if start is not None and start.dtype == carried_dtype:
            carried = self.value(start.name, carried_dtype, self.tile,
                                 lambda env, ctx: env[start.name])
        else:
            carried = self.value(f"metile.zeros({self.tile}, '{carried_dtype}')", carried_dtype,
                                 self.tile, lambda env, ctx: ref.R(carried_dtype,
                                                                  np.zeros(self.tile)))
        stride = "M * N" if self.two_d else "n"
        spelling = self.choice(["metile.tile_range", "metile.range", "range"])
        outer = list(self.pool)
        body_lines, body_steps = [], []
        self.blocks.append((body_lines, body_steps))
        self.pool.append(Val("k", "i32", ()))
        body_steps.append(lambda env, ctx: env.__setitem__("k", ref.R("i32", ctx["k"])))
        chunk = self.value(f"metile.load({name} + k * {stride} + offs, mask=mask)", dtype,
                           self.tile, lambda env, ctx: ref.R(dtype, np.where(
                               ctx["tiles"][name][1], ctx["tiles"][name][0][ctx["k"]], 0)))
        for _ in range(int(self.rng.integers(1, 4))):
            self._operation()
        last = self.pool[-1]
        if broadcast(last.shape, self.tile) != self.tile or last.dtype == "i1" and (
                carried_dtype in FLOATS):
            last = chunk
        source = last.name if last.dtype == carried_dtype else f"{last.name}.to('{carried_dtype}')"
        if last.dtype in FLOATS and carried_dtype in INTEGERS:
            source = f"({last.name} > 0.0).to('{carried_dtype}')"
        if last.shape != self.tile:
            source = f"metile.broadcast_to({source}, {self.tile})"

        def update(env, ctx, last=last):
            x = env[last.name]
            if last.dtype in FLOATS and carried_dtype in INTEGERS:
                x = ref.convert(ref.comparison(">", x, ref.number(0.0, x.dtype)), carried_dtype)
            x = ref.convert(x, carried_dtype)
            env[carried.name] = ref.R(carried_dtype, np.broadcast_to(x.v, self.tile), x.e, x.u)

        self.line(f"{carried.name} = {source}", update)
        self.blocks.pop()
        self.pool = outer

        def run(env, ctx):
            for k in range(0, self.K, step):
                inner = dict(env)
                ctx["k"] = k
                for body_step in body_steps:
                    body_step(inner, ctx)
                env[carried.name] = inner[carried.name]

        self.line(f"for k in {spelling}(0, K, {step}):", run)
        lines = self.blocks[-1][0]
        lines.extend("    " + text for text in body_lines)

    # -- stores -----------------------------------------------------------------------------

    def _stores(self):
        storable = [v for v in self.pool if self._store_pattern(v) is not None]
        chosen = []
        for v in reversed(storable):
            if len(chosen) < 3 and (not chosen or self.rng.random() < 0.5):
                chosen.append(v)
        if not chosen:
            chosen = [self.pool[-1]] if self._store_pattern(self.pool[-1]) else []
        if not chosen:
            v = self.pool[-1]
            chosen = [self.value(f"metile.broadcast_to({v.name}, {self.tile})", v.dtype,
                                 self.tile, lambda env, ctx: ref.R(
                                     env[v.name].dtype, np.broadcast_to(env[v.name].v, self.tile),
                                     env[v.name].e, env[v.name].u))]
        for v in chosen:
            pattern = self._store_pattern(v)
            if v.dtype == "i1":
                dtype = "i32"
            elif v.dtype in FLOATS:
                dtype = self.choice([v.dtype, v.dtype, "f32", "f16", "bf16"])
            else:
                dtype = self.choice([v.dtype, v.dtype, "i32", "u32"])
            out = self._new_param("out", dtype)
            self.outputs.append((out, dtype, pattern))
            pointer, mask = {
                "tile": ("offs", "mask"), "row": ("cols", "cols < N"),
                "col": ("rows", "rows < M"), "scalar": ("pid", None)}[pattern]
            mask = f", mask={mask}" if mask else ""
            self.line(f"metile.store({out} + {pointer}, {v.name}{mask})",
                      lambda env, ctx, v=v, out=out, dtype=dtype: ctx["stored"].__setitem__(
                          out, ref.convert(env[v.name], dtype)))

    def _store_pattern(self, v):
        if v.shape == ():
            return "scalar"
        if v.shape == self.tile:
            return "tile"
        if self.two_d and v.shape == (self.BN,):
            return "row"
        if self.two_d and v.shape == (self.BM,):
            return "col"
        return None

    # -- source -----------------------------------------------------------------------------

    def source(self):
        names = [p[0] for p in self.params] + list(self.scalars) + [
            f"{c}: metile.constexpr" for c in self.constexprs]
        body = "\n".join("    " + text for text in self.blocks[0][0])
        helper = HELPER if self.uses_helper else ""
        return (f"import metile\n\n{helper}\n@metile.kernel\ndef {self.name}({', '.join(names)}):\n"
                f"{body}\n")
