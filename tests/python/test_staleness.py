"""No stale kernels in one process: a kernel compiled once is not reused after something it
captured changed. Mutated global containers, redefined helpers (plain functions, @jit
helpers, module attributes) and a helper's own globals raise CompilationError naming them;
rebinding to an equal value or the same code is no change (captured.py)."""

import copy
import re
import types

import numpy as np
import pytest

import metile

N = 32
OFFSETS = [1, 2]
TABLE = {"scale": 2}
WEIGHTS = np.array([1, 2], np.int32)
NESTED = ([1, 2], 3)
FACTOR = 2


def launch(kernel):
    out = np.zeros(N, np.int32)
    kernel[(1,)](out)
    return out


def filled(out, value):
    i = metile.arange(0, N)
    metile.store(out + i, i * 0 + value)


@metile.kernel
def sum_of_offsets(out):
    filled(out, OFFSETS[0] + OFFSETS[1])


@metile.kernel
def scale_from_table(out):
    filled(out, TABLE["scale"])


@metile.kernel
def first_weight(out):
    filled(out, int(WEIGHTS[0]))


@metile.kernel
def nested_first(out):
    filled(out, NESTED[0][0])


def times(x):
    return x * 2


@metile.jit
def jit_times(x):
    return x * 2


def by_factor(x):
    return x * FACTOR


@metile.kernel
def plain_helper(out):
    filled(out, times(3))


@metile.kernel
def jit_helper(out):
    filled(out, jit_times(3))


@metile.kernel
def helper_reads_a_global(out):
    filled(out, by_factor(3))


@pytest.fixture
def restore_globals():
    """The globals and helpers a test changes, as they were (copies: some change in place)."""
    saved = {name: copy.deepcopy(globals()[name])
             for name in ("OFFSETS", "TABLE", "WEIGHTS", "NESTED", "FACTOR")}
    saved.update(times=times, jit_times=jit_times)
    yield
    globals().update(saved)


def test_a_mutated_global_list_raises_naming_it(restore_globals):
    assert (launch(sum_of_offsets) == 3).all()
    OFFSETS[0] = 5
    with pytest.raises(metile.CompilationError,
                       match=r"sum_of_offsets: the global 'OFFSETS' changed from \[1, 2\] to "
                             r"\[5, 2\] since the kernel was compiled; .* Pass the value as an "
                             r"argument \(a constexpr for a compile-time constant\)"):
        launch(sum_of_offsets)
    OFFSETS[0] = 1  # back as it was traced: launches again
    assert (launch(sum_of_offsets) == 3).all()


@pytest.mark.parametrize("kernel, mutate, before, after", [
    (scale_from_table, lambda: TABLE.update(scale=3), "{'scale': 2}", "{'scale': 3}"),
    (first_weight, lambda: WEIGHTS.__setitem__(0, 7), "array([1, 2], dtype=int32)",
     "array([7, 2], dtype=int32)"),
    (nested_first, lambda: NESTED[0].append(9), "([1, 2], 3)", "([1, 2, 9], 3)"),
])
def test_mutated_dicts_arrays_and_lists_in_tuples_raise(restore_globals, kernel, mutate,
                                                        before, after):
    launch(kernel)
    mutate()
    with pytest.raises(metile.CompilationError,
                       match=f"changed from {re.escape(before)} to {re.escape(after)}"):
        launch(kernel)


def test_a_global_rebound_to_an_equal_list_is_no_change(restore_globals):
    global OFFSETS
    launch(sum_of_offsets)
    traces = sum_of_offsets.stats.traces
    OFFSETS = [1, 2]
    assert (launch(sum_of_offsets) == 3).all()
    assert (launch(sum_of_offsets) == 3).all()
    assert sum_of_offsets.stats.traces == traces


def test_a_redefined_plain_helper_raises_naming_it(restore_globals):
    global times
    assert (launch(plain_helper) == 6).all()

    def times(x):  # noqa: F811: the redefinition is the probe
        return x * 3

    with pytest.raises(metile.CompilationError,
                       match=r"plain_helper: the helper 'times' changed since the kernel was "
                             r"compiled .* Define the kernel again after its helpers, or pass "
                             r"the helper as a constexpr argument"):
        launch(plain_helper)


def test_a_redefined_jit_helper_raises_naming_it(restore_globals):
    global jit_times
    assert (launch(jit_helper) == 6).all()

    @metile.jit
    def jit_times(x):  # noqa: F811
        return x * 3

    with pytest.raises(metile.CompilationError,
                       match="jit_helper: the helper 'jit_times' changed since the kernel"):
        launch(jit_helper)


def test_a_helper_defined_again_with_the_same_code_is_no_change(restore_globals):
    global times, jit_times
    launch(plain_helper)
    launch(jit_helper)

    def times(x):  # noqa: F811
        return x * 2

    @metile.jit
    def jit_times(x):  # noqa: F811
        return x * 2

    assert (launch(plain_helper) == 6).all()
    assert (launch(jit_helper) == 6).all()


def test_a_global_a_helper_reads_is_captured_too(restore_globals):
    global FACTOR
    assert (launch(helper_reads_a_global) == 6).all()
    FACTOR = 5
    with pytest.raises(metile.CompilationError,
                       match=r"the global 'FACTOR' \(read by the helper 'by_factor'\) changed "
                             r"from 2 to 5"):
        launch(helper_reads_a_global)


def test_a_helper_read_as_a_module_attribute_or_through_a_closure():
    helpers = types.ModuleType("helpers")
    helpers.times = lambda x: x * 2
    offsets = [4]

    @metile.kernel
    def attribute_and_closure(out):
        filled(out, helpers.times(offsets[0]))

    assert (launch(attribute_and_closure) == 8).all()
    helpers.times = lambda x: x * 3
    with pytest.raises(metile.CompilationError, match="the helper 'helpers.times' changed"):
        launch(attribute_and_closure)
    helpers.times = lambda x: x * 2  # the same code again
    assert (launch(attribute_and_closure) == 8).all()
    offsets.append(1)
    with pytest.raises(metile.CompilationError,
                       match=r"the global 'offsets' changed from \[4\] to \[4, 1\]"):
        launch(attribute_and_closure)


def test_an_unchanged_kernel_launches_from_its_cache():
    for _ in range(3):
        launch(helper_reads_a_global)
    assert helper_reads_a_global.stats.traces <= 1
    assert helper_reads_a_global.stats.hits >= 2


def test_a_new_process_does_not_read_ir_traced_with_another_modules_old_helper(monkeypatch,
                                                                              tmp_path):
    # The disk cache's key covers a helper read off the program's own module, as a new
    # process sees it (a KernelFunction of the same function is a new process, in effect).
    monkeypatch.setenv("METILE_CACHE_DIR", str(tmp_path))
    helpers = types.ModuleType("helpers")
    helpers.times = times

    @metile.kernel
    def module_helper(out):
        filled(out, helpers.times(3))

    assert (launch(module_helper) == 6).all()
    helpers.times = by_factor  # FACTOR == 2: the same result, another helper
    fresh = metile.KernelFunction(module_helper.fn)
    launch(fresh)
    assert (fresh.stats.traces, fresh.stats.disk_hits) == (1, 0)
    fresh = metile.KernelFunction(module_helper.fn)
    launch(fresh)
    assert (fresh.stats.traces, fresh.stats.disk_hits) == (0, 1)


MEMO = {}


def memoized_double(x):
    MEMO[x] = MEMO.get(x, 0) + 1  # tracing fills a memo the kernel reads
    return x * 2


@metile.kernel
def memo_helper(out):
    filled(out, memoized_double(3))


def test_what_tracing_itself_changes_is_no_change():
    for _ in range(3):
        assert (launch(memo_helper) == 6).all()
    assert MEMO == {3: 1}
