"""The elementwise statements of a generated program (``programs.Program`` mixes them in): each
emits one value and its reference step, and returns the new Val, or None when the pool has no
operands for it."""

import numpy as np

from . import reference as ref
from .reference import FLOATS, INTEGERS
from .values import BUFFER_DTYPES, broadcast, literal


class ElementwiseOps:
    def _binary_pair(self, a_ok=lambda v: True, b_ok=lambda v: True):
        a = self.pick(a_ok)
        if a is None:
            return None, None
        b = self.pick(lambda v: b_ok(v) and broadcast(a.shape, v.shape) is not None)
        return a, b

    def _numeric(self, v):
        return v.dtype != "i1"

    def _arithmetic(self, op, a, b, source=None):
        """``a op b`` (or ``source``, which spells it) in the promoted type of a and b."""
        dtype = ref.promote(a.dtype, b.dtype)

        def compute(env, ctx):
            return ref.arithmetic(op, ref.convert(env[a.name], dtype),
                                  ref.convert(env[b.name], dtype), dtype)

        return self.value(source or f"{a.name} {op} {b.name}", dtype, broadcast(a.shape, b.shape),
                          compute)

    def _op_binary(self):
        op = self.choice(["+", "-", "*"])
        a, b = self._binary_pair(self._numeric, self._numeric)
        return None if b is None else self._arithmetic(op, a, b)

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

        source = (f"{literal(number)} {op} {a.name}" if left else
                  f"{a.name} {op} {literal(number)}")
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
        return None if b is None else self._arithmetic(op, a, b, f"metile.{op}({a.name}, {b.name})")

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
                f"metile.full_like({a.name}, {literal(number)})")
            number = 0 if zero else number
        else:
            source = f"metile.full({a.shape}, {literal(number)}, '{dtype}')"

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
        return None if b is None else self._arithmetic(op, a, b)

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
