"""metile.dot (Tile IR dot): Triton's tl.dot on 2-D tiles, its rules and errors."""

import ml_dtypes
import numpy as np
import pytest

import metile

F32 = np.zeros(64 * 64, np.float32)
F16 = np.zeros(64 * 64, np.float16)


def _tile(ptr, rows, columns):
    return metile.load(ptr + metile.arange(0, rows)[:, None] * columns +
                       metile.arange(0, columns)[None, :])


@metile.kernel
def product(a_ptr, b_ptr, c_ptr, M: metile.constexpr, N: metile.constexpr,
            K: metile.constexpr, PRECISION: metile.constexpr = None):
    a = _tile(a_ptr, M, K)
    b = _tile(b_ptr, K, N)
    c = metile.dot(a, b, input_precision=PRECISION)
    metile.store(c_ptr + metile.arange(0, M)[:, None] * N + metile.arange(0, N)[None, :], c)


def _dot_lines(ir):
    return [line for line in str(ir).splitlines() if "= dot " in line]


def test_dot_records_a_tile_ir_dot_with_an_f32_accumulator():
    lines = _dot_lines(product.trace(F16, F16, F32, M=16, N=32, K=64))
    assert len(lines) == 1
    assert "tile<16x32xf32>" in lines[0]
    assert "precision" not in lines[0]  # left to the kernel's math mode


def test_input_precision_is_recorded():
    (line,) = _dot_lines(product.trace(F32, F32, F32, M=16, N=16, K=16, PRECISION="tf32"))
    assert 'precision = "tf32"' in line


@metile.kernel
def with_options(a_ptr, b_ptr, OUT: metile.constexpr = "f32", TF32: metile.constexpr = None,
                 PRECISION: metile.constexpr = None, IMPRECISE: metile.constexpr = None):
    a = _tile(a_ptr, 16, 16)
    b = _tile(b_ptr, 16, 16)
    metile.dot(a, b, out_dtype=OUT, allow_tf32=TF32, input_precision=PRECISION,
               max_num_imprecise_acc=IMPRECISE)


@pytest.mark.parametrize("options,error,message", [
    (dict(OUT="i32"), metile.NotSupportedError, "dot: out_dtype=i32 is not supported"),
    (dict(PRECISION="tf32x3"), metile.NotSupportedError, "input_precision='tf32x3'"),
    (dict(PRECISION="fast"), metile.CompilationError, "input_precision must be 'ieee' or 'tf32'"),
    (dict(PRECISION="ieee", TF32=True), metile.CompilationError,
     "give input_precision or allow_tf32, not both"),
    (dict(IMPRECISE=4), metile.NotSupportedError, "max_num_imprecise_acc"),
    (dict(TF32=True), metile.CompilationError, "precision tf32 applies to f32 inputs only"),
])
def test_option_errors(options, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace("[", r"\[")):
        with_options.trace(F16, F16, **options)


@metile.kernel
def mismatched(a_ptr, b_ptr, acc_ptr, M: metile.constexpr, K: metile.constexpr,
               K2: metile.constexpr, N: metile.constexpr, ACC: metile.constexpr = False):
    a = _tile(a_ptr, M, K)
    b = _tile(b_ptr, K2, N)
    acc = _tile(acc_ptr, M, N) if ACC else None
    metile.dot(a, b, acc)


@pytest.mark.parametrize("args,shapes,message", [
    ((F32, F16, F32), dict(M=16, K=16, K2=16, N=16), "a and b must have one dtype"),
    ((F32, F32, F32), dict(M=16, K=16, K2=32, N=16), "the inner dimensions differ"),
    ((F32, F32, F32), dict(M=4, K=16, K2=16, N=16), "M, N and K must be at least 8, got M=4"),
    ((F32, F32, F16), dict(M=16, K=16, K2=16, N=16, ACC=True),
     "the accumulator must be tile<16x16xf32>"),
])
def test_operand_errors_name_the_rule(args, shapes, message):
    with pytest.raises(metile.CompilationError, match=message):
        mismatched.trace(*args, **shapes)


@metile.kernel
def one_dimensional(a_ptr):
    a = metile.load(a_ptr + metile.arange(0, 16))
    metile.dot(a, a)


def test_one_dimensional_operands_are_rejected():
    with pytest.raises(metile.CompilationError, match="input and other must be 2-D tiles"):
        one_dimensional.trace(F32)


# ---- end to end, the generic lowering (threadgroup exchange, f32 multiply-adds) ------------
BF16 = ml_dtypes.bfloat16


def _inputs(rng, shape, dtype):
    # Small integers and halves keep every product and sum exact in f16/bf16 and f32.
    return (rng.integers(-4, 5, shape) * 0.5).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
@pytest.mark.parametrize("m,n,k", [(16, 16, 16), (32, 8, 64), (64, 64, 32), (8, 32, 8)])
def test_dot_matches_numpy(m, n, k, dtype, rng):
    a, b = _inputs(rng, (m, k), dtype), _inputs(rng, (k, n), dtype)
    c = np.zeros((m, n), np.float32)
    product[(1,)](a, b, c, M=m, N=n, K=k)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


@metile.kernel
def narrow_product(a_ptr, b_ptr, c_ptr, OUT: metile.constexpr):
    """A [16, 32] @ [32, 8] product plus an accumulator of out_dtype, stored in out_dtype."""
    a = _tile(a_ptr, 16, 32)
    b = _tile(b_ptr, 32, 8)
    offs = metile.arange(0, 16)[:, None] * 8 + metile.arange(0, 8)[None, :]
    c = metile.dot(a, b, metile.load(c_ptr + offs), out_dtype=OUT)
    metile.static_assert(c.dtype == OUT)
    metile.store(c_ptr + offs, c)


@pytest.mark.parametrize("out", ["f16", "bf16"])
def test_narrow_out_dtype_rounds_the_f32_result_once(out, rng):
    dtype = np.float16 if out == "f16" else BF16
    a, b = (rng.standard_normal(s).astype(dtype) for s in ((16, 32), (32, 8)))
    c = rng.standard_normal((16, 8)).astype(dtype)
    expected = (c.astype(np.float32) + a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)
    narrow_product[(1,)](a, b, c, OUT=out)
    # One rounding of an f32 sum that may differ from numpy's in its last bits: one ulp of
    # out_dtype at most.
    ulp = 2.0 ** -10 if out == "f16" else 2.0 ** -7
    np.testing.assert_allclose(c.astype(np.float32), expected.astype(np.float32), rtol=ulp,
                               atol=ulp)


@metile.kernel
def chained(a_ptr, b_ptr, c_ptr, K, M: metile.constexpr, N: metile.constexpr,
            BLOCK_K: metile.constexpr):
    """acc += a[:, k:k+BLOCK_K] @ b[k:k+BLOCK_K, :] over a tile_range K loop, then relu."""
    rows, columns = metile.arange(0, M), metile.arange(0, N)
    inner = metile.arange(0, BLOCK_K)
    acc = metile.zeros((M, N), dtype="f32")
    for k in metile.tile_range(0, K, BLOCK_K):
        a = metile.load(a_ptr + rows[:, None] * K + (k + inner)[None, :])
        b = metile.load(b_ptr + (k + inner)[:, None] * N + columns[None, :])
        acc = metile.dot(a, b, acc)
    metile.store(c_ptr + rows[:, None] * N + columns[None, :], metile.maximum(acc, 0.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_accumulator_chains_through_a_k_loop(dtype, rng):
    m, n, k = 32, 16, 96
    a, b = _inputs(rng, (m, k), dtype), _inputs(rng, (k, n), dtype)
    c = np.zeros((m, n), np.float32)
    chained[(1,)](a, b, c, k, M=m, N=n, BLOCK_K=16)
    np.testing.assert_array_equal(c, np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0))


# Triton's matmul tutorial, with its 2-D pointer idiom, masks and grouped program order.
@metile.kernel
def tutorial_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                    stride_cm, stride_cn, BLOCK_SIZE_M: metile.constexpr,
                    BLOCK_SIZE_N: metile.constexpr, BLOCK_SIZE_K: metile.constexpr,
                    GROUP_SIZE_M: metile.constexpr):
    pid = metile.program_id(axis=0)
    num_pid_m = metile.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = metile.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = metile.minimum(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + metile.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + metile.arange(0, BLOCK_SIZE_N)) % N
    offs_k = metile.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = metile.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=metile.float32)
    for k in range(0, metile.cdiv(K, BLOCK_SIZE_K)):
        a = metile.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = metile.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = metile.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(metile.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + metile.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + metile.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    metile.store(c_ptrs, c, mask=c_mask)


@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (45, 37, 29), (9, 70, 100)])
def test_triton_matmul_tutorial_with_ragged_shapes(m, n, k, rng):
    a, b = _inputs(rng, (m, k), np.float16), _inputs(rng, (k, n), np.float16)
    c = np.zeros((m, n), np.float16)
    bm, bn, bk = 32, 32, 16
    grid = (metile.cdiv(m, bm) * metile.cdiv(n, bn),)
    tutorial_matmul[grid](a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                          BLOCK_SIZE_K=bk, GROUP_SIZE_M=2)
    expected = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(c, expected)


# ---- the SIMD-group path (8x8 matrix fragments) and the generic one on the same kernels ----
def _source(kernel, args, **constexprs):
    specialisation, _ = kernel.specialise(*kernel.bind(args, constexprs))
    return specialisation.compiled.source


def _multiplies_fragments(source):
    """Whether the emitted source (MSL, or CUDA on a GPU machine) multiplies matrix fragments:
    8x8 ones, or mma.sync's own m16n8k16 (16-bit operands on CUDA)."""
    return any(call in source for call in ("simdgroup_multiply_accumulate", "metile_matrix_mma(",
                                           "metile_mma_16816("))


@pytest.mark.parametrize("m,n,k,fragments", [(64, 64, 32, True), (16, 16, 16, True),
                                             (32, 8, 64, False)])
def test_the_dot_lowering_is_chosen_by_shape(m, n, k, fragments):
    """SIMD groups that tile the output's 8x8 blocks evenly multiply fragments; otherwise the
    generic exchange runs (both are checked against numpy above)."""
    a, b, c = (np.zeros((m, k), np.float16), np.zeros((k, n), np.float16),
               np.zeros((m, n), np.float32))
    source = _source(product, (a, b, c), M=m, N=n, K=k)
    assert _multiplies_fragments(source) == fragments


LANE_MAP_PROGRAM = """
import sys
sys.path.insert(0, {tests!r})
import numpy as np
import test_dot as t
rng = np.random.default_rng(3)
for dtype in (np.float32, np.float16):
    a, b = t._inputs(rng, (64, 32), dtype), t._inputs(rng, (32, 64), dtype)
    c = np.zeros((64, 64), np.float32)
    t.product[(1,)](a, b, c, M=64, N=64, K=32)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))
from metile_kernels.gemm import grid, matmul
rows, columns, inner = 70, 45, 37  # ragged: the library GEMM, its K loop in fragments
a, b = t._inputs(rng, (rows, inner), np.float16), t._inputs(rng, (inner, columns), np.float16)
c = np.zeros((rows, columns), np.float32)
matmul[grid(rows, columns, 32, 32)](a, b, c, rows, columns, inner, BLOCK_M=32, BLOCK_N=32)
np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))
print("ok")
"""


def test_fragments_under_a_permuted_emulator_lane_map(tmp_path):
    """The compiler never relies on which lane holds which fragment element: a dot and the
    library GEMM are exact when the host emulator permutes the simdgroup_matrix lane map."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    env = dict(os.environ, METILE_HOST_MATRIX_LANE_MAP="permuted",
               METILE_CACHE_DIR=str(tmp_path / "cache"))
    program = LANE_MAP_PROGRAM.format(tests=str(Path(__file__).parent))
    result = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


@pytest.mark.parametrize("options", [dict(RELAXED_PRECISION=True), dict(STRICT_MATH=True)])
def test_f32_math_modes(options, rng):
    """RELAXED_PRECISION allows TF32 products (exact values stay exact: they fit TF32's
    mantissa); STRICT_MATH keeps them IEEE."""
    a, b = _inputs(rng, (64, 32), np.float32), _inputs(rng, (32, 64), np.float32)
    c = np.zeros((64, 64), np.float32)
    product[(1,)](a, b, c, M=64, N=64, K=32, **options)
    np.testing.assert_array_equal(c, a @ b)


@metile.kernel
def accumulate_onto(a_ptr, b_ptr, acc_ptr, c_ptr, K, M: metile.constexpr, N: metile.constexpr,
                    BLOCK_K: metile.constexpr, LOOP: metile.constexpr):
    """c = acc + a @ b with acc read from memory: one dot over all of K, or a K loop whose
    carried accumulator starts from it."""
    rows, columns, inner = metile.arange(0, M), metile.arange(0, N), metile.arange(0, BLOCK_K)
    acc = _tile(acc_ptr, M, N)
    if LOOP:
        for k in metile.tile_range(0, K, BLOCK_K):
            a = metile.load(a_ptr + rows[:, None] * K + (k + inner)[None, :])
            b = metile.load(b_ptr + (k + inner)[:, None] * N + columns[None, :])
            acc = metile.dot(a, b, acc)
    else:
        acc = metile.dot(_tile(a_ptr, M, BLOCK_K), _tile(b_ptr, BLOCK_K, N), acc)
    metile.store(c_ptr + rows[:, None] * N + columns[None, :], acc)


@pytest.mark.parametrize("loop", [False, True])
def test_an_accumulator_from_memory_enters_the_fragments(loop, rng):
    m, n, k = 32, 32, 32
    a, b = _inputs(rng, (m, k), np.float16), _inputs(rng, (k, n), np.float16)
    acc = _inputs(rng, (m, n), np.float32)
    c = np.zeros((m, n), np.float32)
    accumulate_onto[(1,)](a, b, acc, c, k, M=m, N=n, BLOCK_K=16 if loop else k, LOOP=loop)
    assert _multiplies_fragments(_source(accumulate_onto, (a, b, acc, c, k), M=m, N=n,
                                         BLOCK_K=16 if loop else k, LOOP=loop))
    np.testing.assert_array_equal(c, acc + a.astype(np.float32) @ b.astype(np.float32))
