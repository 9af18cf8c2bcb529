"""The Triton language pieces meTile adds (math, reductions with axis/keep_dims, argmax,
static_range, hints, helpers with loops, num_warps), the kernel object as a function, and an
error for each form that is rejected, asserting its message."""

import inspect
import math
import pydoc
import subprocess
import sys

import numpy as np
import pytest

import metile
import metile as tl


@tl.jit
def math_kernel(x_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if FN == "sigmoid":
        y = tl.sigmoid(x)
    elif FN == "erf":
        y = tl.erf(x)
    elif FN == "floor":
        y = tl.floor(x)
    elif FN == "ceil":
        y = tl.ceil(x)
    elif FN == "log2":
        y = tl.log2(tl.abs(x) + 1)
    elif FN == "pow":
        y = x ** 3 + tl.abs(x) ** 0.5 - (tl.abs(x) + 1) ** -2 + 2 ** x
    elif FN == "fma":
        y = tl.fma(x, x, 1.5)
    else:
        y = tl.clamp(x, -0.5, 0.75)
    tl.store(out_ptr + offs, y, mask=mask)


def _erf(x):
    return np.vectorize(math.erf)(x.astype(np.float64))


REFERENCES = {
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x.astype(np.float64))), 1e-6),
    "erf": (_erf, 4e-7),
    "floor": (np.floor, 0),
    "ceil": (np.ceil, 0),
    "log2": (lambda x: np.log2(np.abs(x) + 1.0), 1e-6),
    "pow": (lambda x: x.astype(np.float64) ** 3 + np.abs(x) ** 0.5 - (np.abs(x) + 1.0) ** -2
            + 2.0 ** x, 1e-5),
    "fma": (lambda x: x * x + 1.5, 1e-6),
    "clamp": (lambda x: np.clip(x, -0.5, 0.75), 0),
}


@pytest.mark.parametrize("fn", sorted(REFERENCES))
def test_math_functions(fn, rng):
    n = 1000
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    x[:8] = [0.0, -0.0, 0.5, -0.5, 2.0, -3.0, 1e-4, 8388609.0]
    if fn in ("floor", "ceil"):
        x[8:12] = [np.inf, -np.inf, 3e9, -3e9]
    if fn == "pow":
        x = np.clip(x, -4, 4)
    out = np.zeros(n, np.float32)
    math_kernel[(tl.cdiv(n, 256),)](x, out, n, FN=fn, BLOCK=256)
    reference, tolerance = REFERENCES[fn]
    np.testing.assert_allclose(out, reference(x), rtol=tolerance, atol=tolerance)


@tl.jit
def erf_f16(x_ptr, out_ptr):
    offs = tl.arange(0, 64)
    tl.store(out_ptr + offs, tl.erf(tl.load(x_ptr + offs)))


def test_erf_of_f16_computes_in_f32(rng):
    x = rng.standard_normal(64).astype(np.float16)
    out = np.zeros(64, np.float16)
    erf_f16[(1,)](x, out)
    np.testing.assert_allclose(out.astype(np.float32), _erf(x), atol=1e-3)


@tl.jit
def reductions(x_ptr, out_ptr, idx_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    row = tl.load(x_ptr + offs[None, :])  # a (1, BLOCK) tile
    tl.store(out_ptr + 0, tl.max(x, 0))
    tl.store(out_ptr + 1, tl.min(x, axis=-1))
    tl.store(out_ptr + 2, tl.sum(x))
    tl.store(out_ptr + 3 + tl.arange(0, 1), tl.max(x, 0, keep_dims=True))
    tl.store(out_ptr + 4 + tl.arange(0, 1), tl.sum(row, axis=1))
    tl.store(out_ptr + 5 + tl.arange(0, 1)[None, :], tl.min(row, axis=1, keep_dims=True))
    tl.store(out_ptr + 6, (x > 0).sum())  # Triton's member-function spelling
    biggest, where = tl.max(x, axis=0, return_indices=True)
    tl.store(out_ptr + 7, biggest)
    tl.store(idx_ptr + 0, where)
    tl.store(idx_ptr + 1, x.argmin(0))
    tl.store(idx_ptr + 2 + tl.arange(0, 1), tl.argmax(row, axis=1))
    tl.store(idx_ptr + 3, tl.argmax(tl.where(x > 0, 1, 0), 0, tie_break_left=False))
    grid = offs[:, None] * 0 + offs[None, :]  # (BLOCK, BLOCK): whole-tile argmax is row-major
    tl.store(idx_ptr + 4, tl.argmax(tl.where(grid == 3, x[:, None], -1e30), axis=None))


def test_reductions_take_triton_axis_and_keep_dims(rng):
    x = rng.standard_normal(32).astype(np.float32)
    x[5] = x[20] = x.max() + 1  # a tie: the first index wins
    x[9] = x.min() - 1
    out, idx = np.zeros(8, np.float32), np.zeros(5, np.int32)
    reductions[(1,)](x, out, idx, BLOCK=32)
    np.testing.assert_allclose(out, [x.max(), x.min(), x.sum(), x.max(), x.sum(), x.min(),
                                     (x > 0).sum(), x.max()], rtol=1e-6)
    last_positive = np.nonzero(x > 0)[0][-1]
    assert list(idx) == [5, 9, 5, last_positive, int(np.argmax(x)) * 32 + 3]


@tl.jit
def static_and_hints(out_ptr, n, BLOCK: tl.constexpr, REPEAT: tl.constexpr):
    tl.static_assert(BLOCK % 32 == 0, "BLOCK is a multiple of 32")
    offs = tl.max_contiguous(tl.multiple_of(tl.program_id(0) * BLOCK, 32) + tl.arange(0, BLOCK),
                             BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    for i in tl.static_range(REPEAT):
        acc += offs * (i + 1)
    tl.store(out_ptr + offs, acc + tl.cdiv(n, 7), mask=offs < n)


@tl.jit
def builtin_extremes(x, y, out, n, LIMIT: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    # Tutorial 03's grouping: the builtin min of a traced scalar and a constexpr.
    first = min(pid * BLOCK, n - 1)
    offs = first + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=0.0)
    b = tl.load(y + offs, mask=mask, other=0.0)
    # Builtins on tiles, three arguments, and on Python numbers (which stay Python's).
    lo = min(a, b, max(LIMIT, 2) * 1.0)
    hi = max(a, b)
    tl.store(out + offs, hi - lo, mask=mask)


def test_builtin_min_and_max_take_traced_values_as_in_triton(rng):
    n = 300
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    builtin_extremes[(tl.cdiv(n, 128),)](x, y, out, n, LIMIT=0, BLOCK=128)
    expected = np.maximum(x, y) - np.minimum(np.minimum(x, y), 2.0)
    np.testing.assert_array_equal(out, expected)


@tl.jit
def stage_sums(x, out, n, BLOCK: tl.constexpr, num_stages: tl.constexpr):
    # The softmax tutorial's constexpr named num_stages, tl.range with Triton's hints and
    # tl.range(end), and tl.math.
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in tl.range(0, n, BLOCK, num_stages=num_stages, loop_unroll_factor=2,
                          flatten=True):
        acc += tl.load(x + start + offs, mask=start + offs < n, other=0.0)
    for _ in tl.range(num_stages):
        acc = tl.math.exp2(tl.math.log2(acc))
    tl.debug_barrier()
    libdevice = tl.extra.cuda.libdevice
    tl.store(out + offs, tl.math.div_rn(acc, 1.0) + tl.math.sqrt_rn(4.0)
             + libdevice.pow(libdevice.fabs(acc), 0.0) - 1.0)


@tl.jit
def tutorial_like(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(x + start + offs, mask=start + offs < n, other=0.0)
    tl.store(out + offs, acc)


def test_triton_loop_hints_option_named_parameters_and_tl_math(rng):
    n = 300
    x = rng.random(n).astype(np.float32) + 0.5
    out = np.zeros(128, np.float32)
    stage_sums[(1,)](x, out, n, BLOCK=128, num_stages=3, num_ctas=1)
    expected = np.pad(x, (0, 84)).reshape(3, 128).sum(0) + 2.0
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    assert tl.math.exp2 is tl.exp2 and tl.math.fma is tl.fma
    # The launch option num_stages (the kernel's own num_stages parameter aside) is taken, and
    # the report says what ran: one stage on a target without mma.sync.
    dispatch = tutorial_like[(1,)].prepare(x, out, n, BLOCK=128, num_stages=3)
    pipelining = dispatch.execution_report["pipelining"]
    assert pipelining["requested_stages"] == 3
    if metile.device() == "host":
        assert pipelining["prefetched_loops"] == []
        assert "has no mma.sync" in pipelining["reason"]
    with pytest.raises(TypeError, match="launch option 'num_ctas' is not supported"):
        stage_sums[(1,)](x, out, n, BLOCK=128, num_stages=3, num_ctas=2)


@tl.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0,
                "HALF": lambda args: args["BLOCK"] // 2})
@tl.jit
def scaled_copy(x, out, n, BLOCK: tl.constexpr, EVEN: tl.constexpr, HALF: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out + offs, tl.load(x + offs) * HALF)
    else:
        tl.store(out + offs, tl.load(x + offs, mask=offs < n) * HALF, mask=offs < n)


def test_heuristics_compute_constexprs_from_the_arguments(rng):
    for n in (256, 300):
        x = rng.standard_normal(n).astype(np.float32)
        out = np.zeros(n, np.float32)
        scaled_copy[(tl.cdiv(n, 128),)](x, out, n, BLOCK=128)
        np.testing.assert_allclose(out, x * 64)
    traced = str(scaled_copy.trace(x, out, 300, BLOCK=64))
    assert "EVEN = 0" in traced and "HALF = 32" in traced
    # A value the call gives wins over the rule; a rule must name a parameter.
    assert "HALF = 3" in str(scaled_copy.trace(x, out, 300, BLOCK=64, HALF=3))
    with pytest.raises(ValueError, match="'NOPE' is not a parameter of scaled_copy"):
        tl.heuristics({"NOPE": lambda args: 1})(scaled_copy)


@tl.autotune(configs=[tl.Config({"BLOCK": 64}), tl.Config({"BLOCK": 128})], key=["n"])
@tl.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0,
                "HALF": lambda args: args["BLOCK"] // 2})
@tl.jit
def tuned_scaled_copy(x, out, n, BLOCK: tl.constexpr, EVEN: tl.constexpr, HALF: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * (HALF + EVEN), mask=offs < n)


def test_heuristics_see_the_autotuned_configuration(rng):
    n = 192  # a multiple of 64, not of 128
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    tuned_scaled_copy[lambda meta: (tl.cdiv(n, meta["BLOCK"]),)](x, out, n)
    block = tuned_scaled_copy.best_config.kwargs["BLOCK"]
    np.testing.assert_allclose(out, x * (block // 2 + (n % block == 0)))


@tl.jit
def cast_to_output(X, Out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    tl.static_assert(X.dtype.is_ptr() and not x.dtype.is_ptr())
    tl.static_assert(x.dtype.is_floating() and x.dtype.primitive_bitwidth == 32)
    y = x * 2 if Out.dtype.element_ty.is_floating() else x
    tl.store(Out + offs, y.to(Out.dtype.element_ty), mask=offs < n)


def test_pointer_dtypes_have_triton_element_ty(rng):
    n = 100
    x = rng.standard_normal(n).astype(np.float32)
    for np_dtype, name in ((np.float16, "f16"), (np.float32, "f32")):
        out = np.zeros(n, np_dtype)
        cast_to_output[(1,)](x, out, n, BLOCK=128)
        np.testing.assert_array_equal(out, (x * 2).astype(np_dtype))
    assert tl.float16 == "f16" and tl.float16.primitive_bitwidth == 16
    assert tl.pointer_type("bf16").element_ty == tl.bfloat16
    assert tl.int32.is_int_signed() and not tl.uint32.is_int_signed()


def test_static_range_static_assert_hints_and_cdiv():
    n = 100
    out = np.zeros(n, np.int32)
    static_and_hints[(tl.cdiv(n, 64),)](out, n, BLOCK=64, REPEAT=3)
    np.testing.assert_array_equal(out, np.arange(n) * 6 + math.ceil(n / 7))
    with pytest.raises(tl.CompilationError, match="static_assert failed: BLOCK is a multiple"):
        static_and_hints.trace(out, n, BLOCK=48, REPEAT=1)


@tl.jit
def running_total(ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in tl.tile_range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(ptr + offs, mask=offs < n, other=0.0)
    return tl.sum(acc)


@tl.jit
def helper_caller(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.store(out_ptr, running_total(x_ptr, n, BLOCK))
    for k in tl.range(0, 2):
        tl.store(out_ptr + 1 + k, running_total(x_ptr, n, BLOCK) * (k + 2))


@pytest.mark.parametrize("num_warps", [None, 2, 4])
def test_tile_range_in_a_jit_helper_and_num_warps(num_warps, rng):
    x = rng.random(1000).astype(np.float32)
    out = np.zeros(3, np.float32)
    options = {} if num_warps is None else {"num_warps": num_warps}
    dispatch = helper_caller[(1,)].prepare(x, out, 1000, BLOCK=128, **options)
    dispatch()
    np.testing.assert_allclose(out, x.sum() * np.array([1, 2, 3]), rtol=1e-5)
    if num_warps is not None:
        threads = dispatch.execution_report["geometry"]["threads_per_threadgroup"][0]
        assert threads == 32 * num_warps


def test_num_warps_that_cannot_map_to_threads():
    with pytest.raises(ValueError, match="num_warps must be a positive power of two"):
        helper_caller.trace(np.zeros(4, np.float32), np.zeros(3, np.float32), 4, BLOCK=128,
                            num_warps=3)
    with pytest.raises(tl.CompilationError, match=r"num_warps=64 \(64 x 32 threads\) cannot be "
                       "met: plan_threads: num_threads = 2048 must be a power of two no larger"):
        helper_caller[(1,)](np.zeros(4, np.float32), np.zeros(3, np.float32), 4, BLOCK=128,
                            num_warps=64)
    with pytest.raises(TypeError, match="'maxnreg' is not supported"):
        helper_caller[(1,)](np.zeros(4, np.float32), np.zeros(3, np.float32), 4, BLOCK=128,
                            maxnreg=128)
    with pytest.raises(ValueError, match="num_stages must be a positive int, got 0"):
        helper_caller[(1,)](np.zeros(4, np.float32), np.zeros(3, np.float32), 4, BLOCK=128,
                            num_stages=0)


def test_the_kernel_object_behaves_like_a_function():
    assert helper_caller.__module__ == __name__
    assert helper_caller.__qualname__ == "helper_caller"
    assert helper_caller.__wrapped__.__name__ == "helper_caller"
    assert list(inspect.signature(helper_caller).parameters) == ["x_ptr", "out_ptr", "n", "BLOCK"]
    assert "running_total(x_ptr, n, BLOCK)" in inspect.getsource(helper_caller)
    assert "sum" in metile.__all__ and "maximum" in metile.__all__
    assert all((getattr(metile, name).__doc__ or "").strip() for name in metile.__all__)
    listing = pydoc.render_doc(metile, renderer=pydoc.plaintext)
    assert "argmax(x, axis, tie_break_left=True, keep_dims=False)" in listing


SCALE = 2


@tl.jit
def scaled(out_ptr):
    tl.store(out_ptr + tl.arange(0, 32), tl.full([32], SCALE, tl.int32))


def test_a_changed_captured_global_raises():
    global SCALE
    out = np.zeros(32, np.int32)
    scaled[(1,)](out)
    assert (out == 2).all()
    SCALE = 3
    try:
        with pytest.raises(tl.CompilationError, match="the global 'SCALE' changed from 2 to 3"):
            scaled[(1,)](out)
    finally:
        SCALE = 2
    scaled[(1,)](out)


def test_a_changed_closure_variable_or_deleted_global_raises_after_cached_launches():
    # The check reads each captured value through the cell or globals dict it found on the
    # first launch: a later change is still seen, however many launches came between.
    scale = 2

    @tl.jit
    def closed(out_ptr):
        tl.store(out_ptr + tl.arange(0, 32), tl.full([32], scale, tl.int32))

    out = np.zeros(32, np.int32)
    for _ in range(3):
        closed[(1,)](out)
    assert (out == 2).all()
    scale = 5
    with pytest.raises(tl.CompilationError, match="the global 'scale' changed from 2 to 5"):
        closed[(1,)](out)
    global SCALE
    scaled[(1,)](out)
    del SCALE
    try:
        with pytest.raises(tl.CompilationError,
                           match="the global 'SCALE' changed from 2 to nothing"):
            scaled[(1,)](out)
    finally:
        SCALE = 2


def test_kernels_defined_in_python_c():
    source = """
import numpy as np, metile
@metile.kernel
def twice(x, n, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    metile.store(x + offs, metile.load(x + offs, mask=offs < n) * 2, mask=offs < n)
a = np.arange(5, dtype=np.float32)
twice[(1,)](a, 5, BLOCK=8)
print(a.tolist())
@metile.kernel
def looped(x, n):
    for i in metile.tile_range(0, n, 1):
        metile.store(x + i, 1.0)
try:
    looped[(1,)](a, 5)
except metile.CompilationError as e:
    print(e.rule)
"""
    result = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                            check=True)
    lines = result.stdout.splitlines()
    assert lines[0] == "[0.0, 2.0, 4.0, 6.0, 8.0]"
    assert "needs the kernel's source text" in lines[1] and "python -c" in lines[1]


# ---- cache hints --------------------------------------------------------------------------
@tl.jit
def hinted_axpy(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, eviction_policy="evict_last", cache_modifier=".cg")
    y = tl.load(y_ptr + offs, mask=mask, other=1.0, eviction_policy="evict_first")
    tl.store(out_ptr + offs, 2 * x + y, mask=mask, eviction_policy="evict_first",
             cache_modifier=".cs")


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_eviction_policies_keep_results(dtype, rng):
    # Triton's cache hints: the CUDA target emits them (CudaCompile.EvictionPolicies...),
    # every target computes the same values, ragged tail included.
    n = 1000
    x = (rng.standard_normal(n) * 8).astype(dtype)
    y = (rng.standard_normal(n) * 8).astype(dtype)
    out = np.full(n, 7, dtype)
    hinted_axpy[(tl.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    np.testing.assert_allclose(out.astype(np.float64), 2 * x.astype(np.float64) + y,
                               rtol=2e-3 if dtype == np.float16 else 1e-6)


# ---- one error per rejected form -----------------------------------------------------------
@tl.jit
def rejected(x_ptr, FORM: tl.constexpr):
    offs = tl.arange(0, 32)
    x = tl.load(x_ptr + offs)
    square = x[:, None] + x[None, :]
    forms = {
        "max of two tiles": lambda: tl.max(x, x),
        "max float axis": lambda: tl.max(x, 0.5),
        "axis out of range": lambda: tl.max(x, 1),
        "reduce a scalar": lambda: tl.sum(tl.program_id(0)),
        "sum of i1 along an axis": lambda: tl.max(square > 0, axis=0),
        "cumsum axis out of range": lambda: tl.cumsum(x, 1),
        "trans of a 1-D tile": lambda: tl.trans(x),
        "permute not a permutation": lambda: tl.permute(square, (1, 1)),
        "split": lambda: tl.split(square),
        "reshape size": lambda: tl.reshape(x, (4, 4)),
        "bitcast": lambda: x.to(tl.int32, bitcast=True),
        "boundary_check": lambda: tl.load(x_ptr + offs, boundary_check=(0,)),
        "traced exponent": lambda: x ** x,
        "fractional exponent": lambda: x ** 1.5,
        "static_assert traced": lambda: tl.static_assert(x > 0),
        "multiple_of wrong": lambda: tl.multiple_of(6, 4),
        "erf of integers": lambda: tl.erf(offs),
        "eviction policy": lambda: tl.load(x_ptr + offs, eviction_policy="evict_most"),
        "store cache modifier": lambda: tl.store(x_ptr + offs, x, cache_modifier=".ca"),
        "eviction on shared memory": lambda: tl.load(tl.shared(32) + offs,
                                                     eviction_policy="evict_last"),
    }
    forms[FORM]()


REJECTED = {
    "max of two tiles": (tl.CompilationError, "the second argument is the axis to reduce, as in "
                         "Triton's tl.max (a Python int or None), got a traced value; for the "
                         "elementwise max of two values write metile.maximum(x, y)"),
    "max float axis": (tl.CompilationError, "got 0.5; for the elementwise max"),
    "axis out of range": (tl.CompilationError, "axis 1 is out of range for a 1-D tile"),
    "reduce a scalar": (tl.CompilationError, "metile.sum: reduces a tile, got the scalar"),
    "sum of i1 along an axis": (tl.CompilationError, "cannot reduce i1 tiles; cast to an "
                                "integer first"),
    "cumsum axis out of range": (tl.CompilationError, "metile.cumsum: axis 1 is out of range "
                                 "for a 1-D tile"),
    "trans of a 1-D tile": (tl.CompilationError, "trans: without dims it transposes a 2-D "
                            "tile, got shape (32,)"),
    "permute not a permutation": (tl.CompilationError, "permute: dims (1, 1) are not a "
                                  "permutation of the axes of a 2-D tile"),
    "split": (tl.CompilationError, "split: the last dimension must be 2, got shape (32, 32)"),
    "reshape size": (tl.CompilationError, "reshape: a (32,) tile has 32 elements, (4, 4) has 16"),
    "bitcast": (tl.NotSupportedError, "cast: bitcast=True is not supported"),
    "boundary_check": (tl.CompilationError, "boundary_check and padding_option apply to "
                       "block pointers"),
    "traced exponent": (tl.NotSupportedError, "**: the exponent must be a Python number"),
    "fractional exponent": (tl.NotSupportedError, "the exponent 1.5 is not an integer"),
    "static_assert traced": (tl.CompilationError, "static_assert needs a value known while "
                             "tracing"),
    "multiple_of wrong": (tl.CompilationError, "multiple_of: 6 is not a multiple of 4"),
    "erf of integers": (tl.CompilationError, "metile.erf: expects a float operand, got "
                        "tile<32xi32>"),
    "eviction policy": (tl.CompilationError, "load: eviction_policy must be '', 'evict_first' "
                        "or 'evict_last', got 'evict_most'"),
    "store cache modifier": (tl.CompilationError, "store: cache_modifier must be one of '', "
                             "'.wb', '.cg', '.cs', '.wt', got '.ca'"),
    "eviction on shared memory": (tl.CompilationError, "load: eviction_policy is a hint for "
                                  "device memory;"),
}


@pytest.mark.parametrize("form", sorted(REJECTED))
def test_rejected_forms_say_what_to_write(form):
    error, message = REJECTED[form]
    with pytest.raises(error) as caught:
        rejected.trace(np.zeros(32, np.float32), FORM=form)
    assert message in caught.value.rule
    assert caught.value.file == __file__


@metile.kernel
def _flips(x, out_last, out_rows, out_ravel, xors, ROWS: metile.constexpr,
           COLS: metile.constexpr):
    r = metile.arange(0, ROWS)
    c = metile.arange(0, COLS)
    tile = metile.load(x + r[:, None] * COLS + c[None, :])
    metile.store(out_last + r[:, None] * COLS + c[None, :], metile.flip(tile))
    metile.store(out_rows + r[:, None] * COLS + c[None, :], metile.flip(tile, 0))
    metile.store(out_ravel + metile.arange(0, ROWS * COLS), metile.ravel(tile))
    metile.store(xors + r, metile.xor_sum(tile, 1))


def test_flip_ravel_and_xor_sum_as_triton_defines_them(rng):
    x = rng.integers(-1000, 1000, (4, 8)).astype(np.int32)
    last, rows, flat = np.zeros_like(x), np.zeros_like(x), np.zeros(32, np.int32)
    xors = np.zeros(4, np.int32)
    _flips[(1,)](x, last, rows, flat, xors, ROWS=4, COLS=8)
    np.testing.assert_array_equal(last, x[:, ::-1])
    np.testing.assert_array_equal(rows, x[::-1, :])
    np.testing.assert_array_equal(flat, x.ravel())
    np.testing.assert_array_equal(xors, np.bitwise_xor.reduce(x, axis=1))


def _swizzle2d_reference(i, j, size_i, size_j, size_g):
    # Triton's tl.swizzle2d, on Python integers (all non-negative).
    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    size_g = min(size_i - off_i, size_g)
    ij = ij % size_gj
    return off_i + ij % size_g, ij // size_g


@metile.kernel
def _swizzled(out_i, out_j, SIZE_I: metile.constexpr, SIZE_J: metile.constexpr,
              GROUP: metile.constexpr):
    i = metile.arange(0, SIZE_I)[:, None] + metile.zeros((SIZE_I, SIZE_J), dtype=metile.int32)
    j = metile.arange(0, SIZE_J)[None, :] + metile.zeros((SIZE_I, SIZE_J), dtype=metile.int32)
    new_i, new_j = metile.swizzle2d(i, j, SIZE_I, SIZE_J, GROUP)
    at = i * SIZE_J + j
    metile.store(out_i + at, new_i)
    metile.store(out_j + at, new_j)


def test_swizzle2d_and_fdiv_as_triton_defines_them():
    out_i, out_j = np.zeros((8, 4), np.int32), np.zeros((8, 4), np.int32)
    _swizzled[(1,)](out_i, out_j, SIZE_I=8, SIZE_J=4, GROUP=3)
    for i in range(8):
        for j in range(4):
            assert (out_i[i, j], out_j[i, j]) == _swizzle2d_reference(i, j, 8, 4, 3)
    x = np.linspace(-3, 3, 64).astype(np.float32)
    out = np.zeros_like(x)

    @metile.kernel
    def divide(x, out):
        offs = metile.arange(0, 64)
        metile.store(out + offs, metile.fdiv(metile.load(x + offs), 3.0))

    divide[(1,)](x, out)
    np.testing.assert_array_equal(out, x / np.float32(3.0))


@metile.kernel
def _sorted(x, out_rows, out_desc, out_columns, ROWS: metile.constexpr, COLS: metile.constexpr):
    r = metile.arange(0, ROWS)
    c = metile.arange(0, COLS)
    at = r[:, None] * COLS + c[None, :]
    tile = metile.load(x + at)
    metile.store(out_rows + at, metile.sort(tile))
    metile.store(out_desc + at, metile.sort(tile, descending=True))
    metile.store(out_columns + at, metile.sort(tile, 0))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_sort_as_triton_defines_it(dtype, rng):
    x = (rng.standard_normal((8, 32)) * 100).astype(dtype)
    rows, desc, columns = (np.zeros_like(x) for _ in range(3))
    _sorted[(1,)](x, rows, desc, columns, ROWS=8, COLS=32)
    np.testing.assert_array_equal(rows, np.sort(x, axis=1))
    np.testing.assert_array_equal(desc, -np.sort(-x, axis=1))
    np.testing.assert_array_equal(columns, np.sort(x, axis=0))


@metile.kernel
def _high_products(x, y, out, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    metile.store(out + offs, metile.umulhi(metile.load(x + offs), metile.load(y + offs)))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_umulhi_is_the_high_half_of_the_product(dtype, rng):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, 64, dtype=np.int64, endpoint=True).astype(dtype)
    y = rng.integers(info.min, info.max, 64, dtype=np.int64, endpoint=True).astype(dtype)
    x[:2], y[:2] = info.max, info.max  # the largest products
    x[2], y[2] = info.min, info.max
    out = np.zeros_like(x)
    _high_products[(1,)](x, y, out, BLOCK=64)
    want = [(int(a) * int(b)) >> 32 for a, b in zip(x, y)]
    assert [int(v) for v in out] == want


@metile.kernel
def _concatenated(x, y, out, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    both = metile.cat(metile.load(x + offs), metile.load(y + offs), can_reorder=True)
    metile.store(out + metile.arange(0, 2 * BLOCK), both)


def test_cat_keeps_the_order(rng):
    x, y = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    out = np.zeros(32, np.float32)
    _concatenated[(1,)](x, y, out, BLOCK=16)
    np.testing.assert_array_equal(out, np.concatenate([x, y]))
