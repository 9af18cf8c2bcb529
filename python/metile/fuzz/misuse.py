"""Invalid @metile.kernel programs and launches: each must raise a user error
(CompilationError and its kinds, TypeError, ValueError) with a message, never an internal
error, another exception, a crash or a hang.

A misuse is a small 1-D kernel (random block size, ragged length, dtypes) with one broken
rule in its body, or a valid kernel launched wrongly. ``expected`` names the error kinds the
rule's documentation promises; KernelFaultError is expected only where the kernel faults
while it runs (a zero divisor, a read out of bounds).
"""

import numpy as np

from .. import errors
from .program_data import random_data
from .values import BUFFER_DTYPES

COMPILE = (errors.CompilationError,)
ARGUMENTS = (TypeError,)
FAULT = (errors.KernelFaultError,)
ANY_USER = (errors.CompilationError, TypeError, ValueError)

# (what, body lines using x (float tile), i (i32 tile), u (u32 tile), b (bool tile)), the
# errors expected. {B} is the block size, {dt} a random buffer dtype.
BODY_MISUSES = [
    ("i32 // u32", ["bad = i // u"], COMPILE),
    ("i32 % u32", ["bad = i % u"], COMPILE),
    ("bitwise and of a float", ["bad = x & i"], ANY_USER),
    ("shift of a float", ["bad = x << 2"], ANY_USER),
    ("invert of a float", ["bad = ~x"], ANY_USER),
    ("tiles of different sizes", ["bad = x + metile.arange(0, {B2})"], COMPILE),
    ("arange of a size that is not a power of two", ["bad = metile.arange(0, 3) + i"], COMPILE),
    ("arange with end before start", ["bad = metile.arange(4, 2)"], COMPILE),
    ("reduction axis out of range", ["bad = metile.sum(x, axis=2)"], COMPILE),
    ("scan axis out of range", ["bad = metile.cumsum(x, axis=1)"], COMPILE),
    ("argmax of a traced axis", ["bad = metile.argmax(x, i)"], ANY_USER),
    ("max of two tiles", ["bad = metile.max(x, x)"], COMPILE),
    ("cast to an unknown dtype", ["bad = x.to('f64')"], ANY_USER),
    ("zeros of an unknown dtype", ["bad = metile.zeros(({B},), 'float8')"], ANY_USER),
    ("power with a tile exponent", ["bad = x ** x"], ANY_USER),
    ("python if on a traced value", ["if x > 0:", "    x = x + 1.0"], COMPILE),
    ("python while on a traced value", ["while i > 0:", "    i = i - 1"], COMPILE),
    ("and of traced values", ["bad = (x > 0) and (i > 0)"], COMPILE),
    ("bool() of a traced value", ["bad = bool(x)"], COMPILE),
    ("load through a non-pointer", ["bad = metile.load(x)"], ANY_USER),
    ("store through a scalar parameter", ["metile.store(n, x)"], ANY_USER),
    ("store with a mask of another shape",
     ["metile.store(out + offs, x, mask=metile.arange(0, {B2}) < 3)"], COMPILE),
    ("load with a mask of another shape",
     ["bad = metile.load(src + offs, mask=metile.arange(0, {B2}) < 3)"], COMPILE),
    ("store of a tile of another shape",
     ["metile.store(out + offs, metile.zeros(({B2},), 'f32'))"], COMPILE),
    ("trans of a 1-D tile", ["x = metile.trans(x)"], None),
    ("permute with a bad order", ["x = metile.permute(x[:, None], (0, 0))"], ANY_USER),
    ("reshape to another size", ["bad = metile.reshape(x, ({B2},))"], COMPILE),
    ("broadcast_to an incompatible shape", ["bad = metile.broadcast_to(x, ({B2}, 3))"], COMPILE),
    ("dot of 1-D tiles", ["bad = metile.dot(x, x)"], COMPILE),
    ("tile_range with step 0", ["for k in metile.tile_range(0, n, 0):", "    x = x + 1.0"],
     COMPILE),
    ("tile_range with a negative step", ["for k in metile.tile_range(0, n, -1):",
                                         "    x = x + 1.0"], COMPILE),
    ("break in a device loop", ["for k in metile.tile_range(0, n):", "    x = x + 1.0",
                                "    break"], COMPILE),
    ("a loop value used after the loop", ["for k in metile.tile_range(0, n):",
                                          "    inner = x + 1.0", "x = inner"], COMPILE),
    ("a carried value changing type", ["for k in metile.tile_range(0, n):",
                                       "    i = x"], COMPILE),
    ("program_id of axis 3", ["bad = metile.program_id(3)"], COMPILE),
    ("a tile of 2**20 elements", ["x = x + metile.sum(metile.arange(0, 2**20), axis=0)"],
     (errors.OutOfResources,)),
    ("a 3-D tile", ["bad = metile.zeros((2, 2, 2), 'f32') + 1.0"], ANY_USER),
    ("a constexpr used as a tile size that is not a power of two",
     ["bad = metile.arange(0, {B} + 1) + 1"], COMPILE),
    ("a negative constant with a u32 tile", ["x = (u + -1).to('f32')"], None),
    ("where with a float condition", ["x = metile.where(x, x, 0.0)"], None),
    ("a constant too large for i32", ["i = i + 4294967296"], ANY_USER),
    ("a runtime zero divisor", ["i = i // (i - i)"], FAULT),
    ("a zero remainder divisor", ["i = i % (i * 0)"], COMPILE + FAULT),
    # 16 elements on: past the slack (under 16 bytes) that a buffer's alignment leaves
    # before its guard page, where reads are not detected (docs/host_emulator.md).
    ("an unmasked load past the end", ["x = metile.load(src + offs + n + 16)"], FAULT),
    ("a literal zero divisor", ["i = i // 0"], COMPILE + FAULT),
    ("device_assert on a traced value", ["metile.device_assert(x > -100.0)"], None),
    ("a static_assert that fails", ["metile.static_assert({B} < 0, 'block too small')"],
     COMPILE),
    ("an unknown metile function", ["bad = metile.atomic_add(out + offs, x)"],
     (AttributeError,)),
]

# Misuses of a valid kernel's launch: (what, how, errors expected).
LAUNCH_MISUSES = [
    ("a missing constexpr", "no_constexpr", ARGUMENTS),
    ("a missing argument", "missing", ARGUMENTS),
    ("an extra argument", "extra", ARGUMENTS),
    ("a Python list as a buffer", "list", ARGUMENTS),
    ("a float64 array", "float64", ARGUMENTS),
    ("a string as a scalar", "string", ARGUMENTS),
    ("a scalar too large for i32", "huge", ANY_USER),
    ("a grid of four dimensions", "grid4", ANY_USER),
    ("a negative grid", "negative_grid", ANY_USER),
    ("a grid of 2**40 programs", "huge_grid", (errors.OutOfResources,)),
    ("a non-power-of-two BLOCK", "block", COMPILE),
    ("an unknown keyword option", "option", ARGUMENTS),
    ("num_stages", "num_stages", ARGUMENTS),
]


class Misuse:
    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        self.name = f"fuzz_misuse_{seed}"
        self.B = int(2 ** rng.integers(1, 8))
        self.n = int(rng.integers(1, 3 * self.B + 1))
        self.src_dtype = BUFFER_DTYPES[rng.integers(0, 3)]
        self.out_dtype = BUFFER_DTYPES[rng.integers(len(BUFFER_DTYPES))]
        self.how = None
        table = BODY_MISUSES + LAUNCH_MISUSES
        self.what, body, self.expected = table[rng.integers(len(table))]
        if isinstance(body, str):
            self.how, body = body, []
        lines = [
            "offs = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)",
            "mask = offs < n",
            "x = metile.load(src + offs, mask=mask)",
            "i = metile.load(isrc + offs, mask=mask)",
            "u = i.to('u32')",
            "b = x > 0.0",
        ]
        lines += [line.format(B=self.B, B2=2 * self.B) for line in body]
        lines.append("metile.store(out + offs, x + i + b.to('f32'), mask=mask)")
        body_text = "\n".join("    " + line for line in lines)
        self.source = (f"import metile\n\n\n@metile.kernel\ndef {self.name}(src, isrc, out, n, "
                       f"BLOCK: metile.constexpr):\n{body_text}\n")
        data_rng = np.random.default_rng(seed + 1)
        self.arrays = [random_data(data_rng, self.src_dtype, self.n),
                       random_data(data_rng, "i32", self.n),
                       np.zeros(self.n, np.float32)]

    def launch(self, kernel):
        grid, args, options = (-(-self.n // self.B),), [*self.arrays, self.n], {"BLOCK": self.B}
        how = self.how
        if how == "no_constexpr":
            options = {}
        elif how == "missing":
            args = args[:-1]
        elif how == "extra":
            args = args + [3]
        elif how == "list":
            args[0] = list(args[0])
        elif how == "float64":
            args[0] = args[0].astype(np.float64)
        elif how == "string":
            args[3] = "ten"
        elif how == "huge":
            args[3] = 2**40
        elif how == "grid4":
            grid = (1, 1, 1, 1)
        elif how == "negative_grid":
            grid = (-1,)
        elif how == "huge_grid":
            grid = (2**20, 2**20, 1)
        elif how == "block":
            options = {"BLOCK": self.B + 3}
        elif how == "option":
            options["NOT_AN_OPTION"] = 1
        elif how == "num_stages":
            options["num_stages"] = 3
        kernel[grid](*args, **options)
