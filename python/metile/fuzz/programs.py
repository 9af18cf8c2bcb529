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
from .reference import FLOATS, INTEGERS

BUFFER_DTYPES = FLOATS + INTEGERS
SENTINEL = {"f16": -77.0, "bf16": -77.0, "f32": -77.0, "i32": -77, "u32": 77777}


HELPER = """
@metile.jit
def fuzz_helper(a, b):
    return a * b - a

"""


class Val:
    def __init__(self, name, dtype, shape, data=None):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)
        self.data = data  # a load of "nonzero" or "shift" data (0..31): raw divisors and amounts


def broadcast(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def _literal(value):
    return repr(float(value)) if isinstance(value, float) else str(int(value))


class Program:
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
        other_source = "" if other is None else f", other={_literal(other)}"
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

    # -- operations: each returns the new Val, or None when the pool has no operands for it --

    def _binary_pair(self, a_ok=lambda v: True, b_ok=lambda v: True):
        a = self.pick(a_ok)
        if a is None:
            return None, None
        b = self.pick(lambda v: b_ok(v) and broadcast(a.shape, v.shape) is not None)
        return a, b

    def _numeric(self, v):
        return v.dtype != "i1"

    def _op_binary(self):
        op = self.choice(["+", "-", "*"])
        a, b = self._binary_pair(self._numeric, self._numeric)
        if b is None:
            return None
        dtype = ref.promote(a.dtype, b.dtype)

        def compute(env, ctx):
            return ref.arithmetic(op, ref.convert(env[a.name], dtype),
                                  ref.convert(env[b.name], dtype), dtype)

        return self.value(f"{a.name} {op} {b.name}", dtype, broadcast(a.shape, b.shape), compute)

    def _op_number(self):
        a = self.pick(self._numeric)
        op = self.choice(["+", "-", "*"])
        if a.dtype in FLOATS or self.rng.random() < 0.3:
            number = float(self.choice([0.5, 2.0, -1.5, 0.25, 3.0]))
        else:
            number = int(self.choice([1, 2, 3, 7]) if a.dtype == "u32" else self.choice(
                [1, 2, -3, 7, -1]))
        left = bool(self.rng.random() < 0.4)
        dtype = ref.with_number(a.dtype, number)

        def compute(env, ctx):
            x = ref.convert(env[a.name], dtype)
            c = ref.convert(ref.number(number, "f32" if isinstance(number, float) else "i32"),
                            dtype)
            return ref.arithmetic(op, c, x, dtype) if left else ref.arithmetic(op, x, c, dtype)

        source = (f"{_literal(number)} {op} {a.name}" if left else
                  f"{a.name} {op} {_literal(number)}")
        return self.value(source, dtype, a.shape, compute)

    def _op_compare(self):
        op = self.choice(["<", "<=", ">", ">=", "==", "!="])
        a, b = self._binary_pair(self._numeric, self._numeric)
        if b is None:
            return None
        dtype = ref.promote(a.dtype, b.dtype)

        def compute(env, ctx):
            return ref.comparison(op, ref.convert(env[a.name], dtype),
                                  ref.convert(env[b.name], dtype))

        return self.value(f"{a.name} {op} {b.name}", "i1", broadcast(a.shape, b.shape), compute)

    def _op_where(self):
        c = self.pick(lambda v: v.dtype == "i1")
        if c is None:
            return None
        a, b = self._binary_pair(lambda v: broadcast(v.shape, c.shape) is not None,
                                 lambda v: broadcast(v.shape, c.shape) is not None)
        if b is None or broadcast(a.shape, b.shape, c.shape) is None:
            return None
        dtype = ref.promote(a.dtype, b.dtype)

        def compute(env, ctx):
            return ref.where(env[c.name], ref.convert(env[a.name], dtype),
                             ref.convert(env[b.name], dtype))

        return self.value(f"metile.where({c.name}, {a.name}, {b.name})", dtype,
                          broadcast(a.shape, b.shape, c.shape), compute)

    def _op_cast(self):
        a = self.pick()
        dtype = self.choice(BUFFER_DTYPES + ("i1",))
        source, clamp = a.name, None
        if a.dtype in FLOATS and dtype in INTEGERS:
            clamp = (0.0 if dtype == "u32" else -1000.0, 1000.0)
            source = f"metile.minimum(metile.maximum({a.name}, {clamp[0]}), {clamp[1]})"
        spelling = self.choice(["{0}.to('{1}')", "metile.cast({0}, '{1}')",
                                "{0}.to(metile.{2})"])
        long_name = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "i32": "int32",
                     "u32": "uint32", "i1": "int1"}[dtype]
        source = spelling.format(f"({source})" if clamp else source, dtype, long_name)

        def compute(env, ctx):
            x = env[a.name]
            if clamp:
                low, high = (ref.convert(ref.number(c, "f32"), a.dtype) for c in clamp)
                x = ref.arithmetic("minimum", ref.arithmetic("maximum", x, low, a.dtype), high,
                                   a.dtype)
            return ref.convert(x, dtype)

        return self.value(source, dtype, a.shape, compute)

    def _op_unary(self):
        a = self.pick()
        op = self.choice(["-", "~", "abs"])
        if op == "~" and a.dtype in FLOATS or op != "~" and a.dtype == "i1":
            return None
        fn = {"-": ref.negate, "~": ref.invert, "abs": ref.absolute}[op]
        source = (f"{op}{a.name}" if op != "abs" else
                  self.choice([f"metile.abs({a.name})", f"abs({a.name})", f"{a.name}.abs()"]))
        return self.value(source, a.dtype, a.shape, lambda env, ctx: fn(env[a.name]))

    def _op_math(self):
        a = self.pick(lambda v: v.dtype in FLOATS)
        if a is None:
            return None
        name = self.choice(["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sigmoid",
                            "erf", "sin", "cos", "floor", "ceil"])
        argument, guard = a.name, None
        if name in ("log", "log2", "rsqrt"):
            argument, guard = f"metile.abs({a.name}) + 1.0", "abs+1"
        elif name == "sqrt":
            argument, guard = f"metile.abs({a.name})", "abs"
        elif name in ("exp", "exp2"):
            argument, guard = f"metile.minimum({a.name}, 4.0)", "min4"
        fast = name in ("exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "exp2") and (
            self.rng.random() < 0.2)
        spelled = f"metile.fast_{name}" if fast else f"metile.{name}"

        # sigmoid is 1 / (1 + exp(-x)), as in Triton: of f16 or bf16 an f32 (the division).
        dtype = "f32" if name == "sigmoid" else a.dtype

        def compute(env, ctx):
            x = env[a.name]
            if name == "sigmoid":
                e = ref.math_function("exp", ref.negate(x))
                t = ref.arithmetic("+", ref.number(1.0, a.dtype), e, a.dtype)
                return ref.arithmetic("/", ref.number(1.0, "f32"), ref.convert(t, "f32"), "f32")
            if guard in ("abs", "abs+1"):
                x = ref.absolute(x)
            if guard == "abs+1":
                x = ref.arithmetic("+", x, ref.number(1.0, a.dtype), a.dtype)
            if guard == "min4":
                x = ref.arithmetic("minimum", x, ref.number(4.0, a.dtype), a.dtype)
            return ref.math_function(name, x)

        return self.value(f"{spelled}({argument})", dtype, a.shape, compute)

    def _op_minmax(self):
        op = self.choice(["maximum", "minimum"])
        a, b = self._binary_pair(self._numeric, self._numeric)
        if b is None:
            return None
        dtype = ref.promote(a.dtype, b.dtype)

        def compute(env, ctx):
            return ref.arithmetic(op, ref.convert(env[a.name], dtype),
                                  ref.convert(env[b.name], dtype), dtype)

        return self.value(f"metile.{op}({a.name}, {b.name})", dtype,
                          broadcast(a.shape, b.shape), compute)

    def _op_clamp(self):
        a = self.pick(lambda v: v.dtype in FLOATS)
        if a is None:
            return None
        low, high = sorted(float(self.choice([-1.5, -0.5, 0.0, 0.25, 1.0, 2.0])) for _ in range(2))

        def compute(env, ctx):
            x = env[a.name]
            lo, hi = (ref.convert(ref.number(c, "f32"), a.dtype) for c in (low, high))
            return ref.arithmetic("minimum", ref.arithmetic("maximum", x, lo, a.dtype), hi,
                                  a.dtype)

        return self.value(f"metile.clamp({a.name}, {low}, {high})", a.dtype, a.shape, compute)

    def _op_full(self):
        a = self.pick(lambda v: len(v.shape) >= 1)
        dtype = self.choice(BUFFER_DTYPES + ("i1",)) if self.rng.random() < 0.5 else a.dtype
        number = (float(self.choice([0.5, -2.0, 3.0])) if dtype in FLOATS else
                  int(self.choice([0, 1])) if dtype in ("i1", "u32") else int(self.choice([-3, 7])))
        if dtype == a.dtype and self.rng.random() < 0.5:
            zero = self.rng.random() < 0.5
            source = f"metile.zeros_like({a.name})" if zero else (
                f"metile.full_like({a.name}, {_literal(number)})")
            number = 0 if zero else number
        else:
            source = f"metile.full({a.shape}, {_literal(number)}, '{dtype}')"

        def compute(env, ctx):
            constant = ref.convert(ref.number(number, "f32" if isinstance(number, float)
                                              else "i32"), dtype)
            return ref.R(dtype, np.full(a.shape, constant.v))

        return self.value(source, dtype, a.shape, compute)

    def _op_helper(self):
        # HELPER (a @metile.jit function of the kernel's module) runs inline while tracing.
        a, b = self._binary_pair(self._numeric, self._numeric)
        if b is None:
            return None
        dtype = ref.promote(a.dtype, b.dtype)
        self.uses_helper = True

        def compute(env, ctx):
            x, y = ref.convert(env[a.name], dtype), ref.convert(env[b.name], dtype)
            return ref.arithmetic("-", ref.arithmetic("*", x, y, dtype), x, dtype)

        return self.value(f"fuzz_helper({a.name}, {b.name})", dtype, broadcast(a.shape, b.shape),
                          compute)

    def _op_fma(self):
        a, b = self._binary_pair(lambda v: v.dtype in FLOATS, lambda v: v.dtype in FLOATS)
        if b is None:
            return None
        c = self.pick(lambda v: v.dtype in FLOATS and broadcast(a.shape, b.shape, v.shape))
        if c is None:
            return None
        dtype = ref.promote(ref.promote(a.dtype, b.dtype), c.dtype)

        def compute(env, ctx):
            x, y, z = (ref.convert(env[v.name], dtype) for v in (a, b, c))
            return ref.arithmetic("+", ref.arithmetic("*", x, y, dtype), z, dtype)

        return self.value(f"metile.fma({a.name}, {b.name}, {c.name})", dtype,
                          broadcast(a.shape, b.shape, c.shape), compute)

    def _op_shift(self):
        op = self.choice(["<<", ">>"])
        a, b = self._binary_pair(lambda v: v.dtype in INTEGERS, lambda v: v.dtype in INTEGERS)
        if b is None:
            return None
        dtype = ref.promote(a.dtype, b.dtype)
        raw = b.data == "shift"

        def compute(env, ctx):
            amount = env[b.name] if raw else ref.arithmetic("&", env[b.name],
                                                            ref.number(31, b.dtype), b.dtype)
            return ref.arithmetic(op, ref.convert(env[a.name], dtype), ref.convert(amount, dtype),
                                  dtype)

        amount = b.name if raw else f"({b.name} & 31)"
        return self.value(f"{a.name} {op} {amount}", dtype, broadcast(a.shape, b.shape), compute)

    def _op_bitwise(self):
        op = self.choice(["&", "|", "^"])
        integral = lambda v: v.dtype in INTEGERS + ("i1",)  # noqa: E731
        a, b = self._binary_pair(integral, integral)
        if b is None:
            return None
        dtype = ref.promote(a.dtype, b.dtype)

        def compute(env, ctx):
            return ref.arithmetic(op, ref.convert(env[a.name], dtype),
                                  ref.convert(env[b.name], dtype), dtype)

        return self.value(f"{a.name} {op} {b.name}", dtype, broadcast(a.shape, b.shape), compute)

    def _op_divide(self):
        op = self.choice(["/", "//", "%"])
        if op == "/":
            a, b = self._binary_pair(self._numeric, self._numeric)
            if b is not None and {a.dtype, b.dtype} == {"i32", "u32"}:
                return None  # a CompilationError (misuse.py has it)
        else:
            a = self.pick(lambda v: v.dtype in INTEGERS)
            b = a and self.pick(lambda v: v.dtype == a.dtype and broadcast(a.shape, v.shape))
        if b is None:
            return None
        negative = b.dtype == "i32" and self.rng.random() < 0.3
        raw = op != "/" and b.data == "nonzero"
        if raw:
            divisor, negative = b.name, False
        elif b.dtype in FLOATS:
            divisor = f"(metile.abs({b.name}) + 1.0)"
        else:
            divisor = f"(-(({b.name} & 7) + 2))" if negative else f"(({b.name} & 7) + 1)"

        def divisor_value(env):
            x = env[b.name]
            if raw:
                return x
            if b.dtype in FLOATS:
                return ref.arithmetic("+", ref.absolute(x), ref.number(1.0, b.dtype), b.dtype)
            x = ref.arithmetic("&", x, ref.number(7, b.dtype), b.dtype)
            x = ref.arithmetic("+", x, ref.number(2 if negative else 1, b.dtype), b.dtype)
            return ref.negate(x) if negative else x

        if op == "/":
            dtype = ref.promote(a.dtype, b.dtype, div_or_mod=True)
            dtype = "f32" if dtype not in FLOATS else dtype
        else:
            dtype = a.dtype

        def compute(env, ctx):
            return ref.arithmetic(op, ref.convert(env[a.name], dtype),
                                  ref.convert(divisor_value(env), dtype), dtype)

        return self.value(f"{a.name} {op} {divisor}", dtype, broadcast(a.shape, b.shape), compute)

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

    # -- source and data --------------------------------------------------------------------

    def source(self):
        names = [p[0] for p in self.params] + list(self.scalars) + [
            f"{c}: metile.constexpr" for c in self.constexprs]
        body = "\n".join("    " + text for text in self.blocks[0][0])
        helper = HELPER if self.uses_helper else ""
        return (f"import metile\n\n{helper}\n@metile.kernel\ndef {self.name}({', '.join(names)}):\n"
                f"{body}\n")

    def arrays(self, rng):
        """The launch's input and output arrays (numpy), by parameter name."""
        arrays = {}
        size = self.M * self.N if self.two_d else self.n
        for name, kind, dtype in self.params:
            if kind == "out":
                pattern = next(p for o, _, p in self.outputs if o == name)
                count = {"tile": size, "scalar": self.grid}.get(pattern) or (
                    self.N if pattern == "row" else self.M)
                arrays[name] = np.full(count, SENTINEL[dtype], ref_numpy(dtype))
                continue
            pattern = self.inputs[name][1]
            count = {"tile": size, "chunks": max(self.K, 1) * size}.get(pattern) or (
                self.N if pattern == "row" else self.M)
            arrays[name] = random_data(rng, dtype, count, self.data_kinds.get(name))
        return arrays

    def expected(self, arrays):
        """The reference outputs: {name: (values, errors, unknown)} over each whole buffer."""
        ctx = {"tiles": {}, "stored": {}}
        results = {name: None for name, _, _ in self.outputs}
        for pid in range(self.grid):
            ctx.update(pid=pid, tiles=self._tiles(arrays, pid), stored={})
            env = {"alpha": ref.R("f32", self.scalars["alpha"]),
                   "beta": ref.R("i32", self.scalars["beta"])}
            for step in self.blocks[0][1]:
                step(env, ctx)
            for name, dtype, pattern in self.outputs:
                results[name] = self._place(results[name], ctx["stored"][name], arrays[name],
                                            dtype, pattern, pid)
        return results

    def _tiles(self, arrays, pid):
        """Each input as the kernel's loads see it: (values of the tile, which are in bounds)."""
        tiles = {}
        for name, (dtype, pattern) in self.inputs.items():
            data = np.asarray(arrays[name]).astype(np.float64 if dtype in FLOATS else np.int64)
            if self.two_d:
                rows, cols = np.arange(self.BM)[:, None], np.arange(self.BN)[None, :]
                if pattern == "row":
                    valid = np.arange(self.BN) < self.N
                    index = np.where(valid, np.arange(self.BN), 0)
                elif pattern == "col":
                    valid = np.arange(self.BM) < self.M
                    index = np.where(valid, np.arange(self.BM), 0)
                else:
                    valid = (rows < self.M) & (cols < self.N)
                    index = np.where(valid, rows * self.N + cols, 0)
            else:
                offsets = pid * self.B + np.arange(self.B)
                valid = offsets < self.n
                index = np.where(valid, offsets, 0)
            if pattern == "chunks":
                size = self.M * self.N if self.two_d else self.n
                chunks = data.reshape(max(self.K, 1), size)
                tiles[name] = (chunks[:, index], valid)
            else:
                tiles[name] = (data[index], valid)
        return tiles

    def _place(self, result, stored, array, dtype, pattern, pid):
        if result is None:
            sentinel = np.asarray(array).astype(np.float64 if dtype in FLOATS else np.int64)
            result = (sentinel.copy(), np.zeros(sentinel.shape), np.zeros(sentinel.shape, bool))
        values, errors, unknown = result
        v, e, u = (np.broadcast_to(x, stored.v.shape) for x in (stored.v, stored.e, stored.u))
        if pattern == "scalar":
            values[pid], errors[pid], unknown[pid] = v, e, u
        elif pattern == "tile":
            if self.two_d:
                for i in range(self.M):
                    sl = slice(i * self.N, (i + 1) * self.N)
                    values[sl], errors[sl], unknown[sl] = v[i, :self.N], e[i, :self.N], u[
                        i, :self.N]
            else:
                count = min(self.B, self.n - pid * self.B)
                sl = slice(pid * self.B, pid * self.B + count)
                values[sl], errors[sl], unknown[sl] = v[:count], e[:count], u[:count]
        else:
            count = self.N if pattern == "row" else self.M
            values[:count], errors[:count], unknown[:count] = v[:count], e[:count], u[:count]
        return values, errors, unknown

    def launch_arguments(self, arrays):
        return [arrays[p[0]] for p in self.params] + list(self.scalars.values())


def ref_numpy(dtype):
    from ..dtypes import to_numpy

    return to_numpy(dtype)


def random_data(rng, dtype, count, kind=None):
    if kind == "nonzero":
        values = rng.integers(1, 21, count)
        if dtype == "i32":  # negative ones too, but not -1 (INT_MIN // -1 overflows)
            values = np.where((values > 1) & (rng.random(count) < 0.5), -values, values)
        return values.astype(ref_numpy(dtype))
    if kind == "shift":
        return rng.integers(0, 32, count).astype(ref_numpy(dtype))
    if dtype in FLOATS:
        values = rng.uniform(-2.0, 2.0, count)
        whole = rng.random(count) < 0.2
        values = np.where(whole, rng.integers(-3, 4, count), values)
        return values.astype(ref_numpy(dtype))
    wide = rng.random() < 0.15
    if dtype == "i32":
        low, high = (-(2**31), 2**31) if wide else (-20, 21)
    else:
        low, high = (0, 2**32) if wide else (0, 41)
    return rng.integers(low, high, count, dtype=np.int64).astype(ref_numpy(dtype))
