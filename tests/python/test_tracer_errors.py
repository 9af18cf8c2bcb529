"""Python failures while a kernel is traced are CompilationErrors naming the kernel and the
helper, at the user's line, with a short traceback of the user's frames: unbounded
recursion in a helper, and exceptions the kernel's own Python code raises. meTile's own
errors pass unchanged (tracing.body_failure)."""

import traceback

import numpy as np
import pytest

import metile

N = 32


def launch(kernel):
    out = np.zeros(N, np.int32)
    kernel[(1,)](out)
    return out


def filled(out, value):
    i = metile.arange(0, N)
    metile.store(out + i, i * 0 + value)


@metile.jit
def countdown(x, n):
    return countdown(x, n - 1)  # no base case


@metile.kernel
def jit_recursion(out):
    filled(out, countdown(1, 3))


def grow(x):
    return grow(x + 1)  # on a traced value: every level traces an add


@metile.kernel
def plain_recursion(out):
    filled(out, grow(metile.program_id(0)))


def ping(n):
    return pong(n + 1)


def pong(n):
    return ping(n + 1)


@metile.kernel
def mutual_recursion(out):
    filled(out, ping(0))


def uses_undefined(x):
    return x + undefined_name  # noqa: F821: the probe


@metile.kernel
def name_error_in_helper(out):
    filled(out, uses_undefined(1))


@metile.kernel
def division_by_zero_in_body(out):
    filled(out, 1 // 0)


@metile.kernel
def metile_rule_broken(out):
    i = metile.arange(0, 3)
    metile.store(out + i, i)


def formatted(error):
    return "".join(traceback.format_exception(error))


def test_unbounded_recursion_in_a_jit_helper_names_kernel_and_helper():
    with pytest.raises(metile.CompilationError) as e:
        launch(jit_recursion)
    message = str(e.value)
    assert "jit_recursion: the helper 'countdown' recursed without end while the kernel was " \
           "traced (maximum recursion depth exceeded" in message
    assert "a recursion must stop on values known then" in message
    assert isinstance(e.value, RecursionError)  # code catching RecursionError still does
    assert (e.value.file, e.value.line) == (__file__, countdown.fn.__code__.co_firstlineno + 2)
    text = formatted(e.value)
    assert len(text.splitlines()) < 40, text
    assert "countdown(x, n - 1)" in text  # the user's line is in the traceback


def test_unbounded_recursion_of_a_plain_helper_on_traced_values():
    with pytest.raises(metile.CompilationError,
                       match="plain_recursion: the helper 'grow' recursed without end") as e:
        launch(plain_recursion)
    assert len(formatted(e.value).splitlines()) < 40


def test_mutual_recursion_names_both_helpers():
    with pytest.raises(metile.CompilationError,
                       match=r"mutual_recursion: the helper 'ping' \(through 'pong'\) recursed "
                             "without end"):
        launch(mutual_recursion)


def test_an_exception_in_a_helper_names_kernel_helper_and_line():
    with pytest.raises(metile.CompilationError,
                       match="name_error_in_helper: NameError in the helper 'uses_undefined' "
                             "while the kernel was traced: name 'undefined_name' is not "
                             "defined") as e:
        launch(name_error_in_helper)
    assert isinstance(e.value, NameError)
    assert (e.value.file, e.value.line) == (__file__, uses_undefined.__code__.co_firstlineno + 1)
    assert len(formatted(e.value).splitlines()) < 30


def test_an_exception_in_the_kernel_body():
    with pytest.raises(metile.CompilationError,
                       match="division_by_zero_in_body: ZeroDivisionError in the kernel's body "
                             "while the kernel was traced: integer division or modulo by "
                             "zero") as e:
        division_by_zero_in_body.trace(np.zeros(N, np.int32))
    assert isinstance(e.value, ZeroDivisionError)
    assert e.value.line == division_by_zero_in_body.fn.__code__.co_firstlineno + 2


def test_metiles_own_errors_pass_unchanged():
    with pytest.raises(metile.CompilationError) as e:
        launch(metile_rule_broken)
    assert "while the kernel was traced" not in str(e.value)
    assert type(e.value) is metile.CompilationError
