"""metile.dot (Tile IR dot): Triton's tl.dot on 2-D tiles, its rules and errors."""

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
    (dict(OUT="f16"), metile.NotSupportedError, "dot: out_dtype=f16 is not supported"),
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
