"""device_assert and device_print on the host emulator: a failed assertion is a
metile.KernelFaultError naming the message, the kernel, the line, the program and the
thread, and the process stays usable; device_print writes one line per element, Triton's
way, each thread's lines in program order."""

import inspect
import re

import numpy as np
import pytest

import metile

pytestmark = pytest.mark.skipif(metile.device() != "host", reason="host emulator output")


def line_of(function, text):
    source, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(source) if text in line)


@metile.kernel
def checked_copy(x_ptr, out, n, BLOCK: metile.constexpr):
    offs = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    x = metile.load(x_ptr + offs, mask=offs < n, other=0)
    metile.device_assert(x >= 0, "x must not be negative", mask=offs < n)
    metile.store(out + offs, x, mask=offs < n)


@pytest.mark.parametrize("block", [32, 256])
def test_a_failed_device_assert_is_a_kernel_fault_naming_the_line_and_thread(block):
    x = np.arange(300, dtype=np.int32)
    out = np.zeros_like(x)
    checked_copy[(metile.cdiv(300, block),)](x, out, 300, BLOCK=block)
    np.testing.assert_array_equal(out, x)

    x[block + 5] = -1  # program 1, thread 5 of the striped layout
    with pytest.raises(metile.KernelFaultError) as info:
        checked_copy[(metile.cdiv(300, block),)](x, out, 300, BLOCK=block)
    error = info.value
    assert error.kernel == "checked_copy"
    assert error.line == line_of(checked_copy.fn, "metile.device_assert(")
    assert error.file == __file__
    assert error.threadgroup == (1, 0, 0)
    assert error.thread == 5
    assert "device_assert failed in kernel 'checked_copy' (threadgroup (1,0,0), thread 5): " \
           "x must not be negative" in str(error)

    # The process stays usable; masked-off elements are not checked.
    x[block + 5] = 7
    checked_copy[(metile.cdiv(300, block),)](x, out, 300, BLOCK=block)
    np.testing.assert_array_equal(out, x)


@metile.kernel
def printing(x_ptr, n, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    x = metile.load(x_ptr + offs, mask=offs < n, other=-1.0)
    metile.device_print("x", x)
    square = offs[:, None] * BLOCK + offs[None, :]
    metile.device_print("sq=", square, hex=True)
    metile.device_print("n ", n, metile.program_id(0))


def test_device_print_writes_a_line_per_element_and_per_thread(capfd):
    x = np.array([0.5, -2.0, 3.25], np.float32)
    printing[(2,)](x, 3, BLOCK=4)
    lines = capfd.readouterr().out.splitlines()
    pattern = re.compile(r"pid \((\d), 0, 0\) thread (\d+) (.*)")
    parsed = [pattern.fullmatch(line).groups() for line in lines]
    programs = {p for p, _, _ in parsed}
    assert programs == {"0", "1"}
    for program in programs:
        mine = [(int(t), text) for p, t, text in parsed if p == program]
        one_d = sorted(text for _, text in mine if text.startswith("idx (") and " x " in text)
        assert one_d == [f"idx ({i}) x {v:f}" for i, v in enumerate([0.5, -2.0, 3.25, -1.0])]
        two_d = {text for _, text in mine if "sq=" in text}
        assert two_d == {f"idx ({i}, {j}) sq= 0x{i * 4 + j:08x}" for i in range(4)
                         for j in range(4)}
        scalars = [(t, text) for t, text in mine if text.startswith("n ")]
        threads = {t for t, _ in mine}
        assert sorted(scalars) == sorted(
            [(t, "n (operand 0) 3") for t in threads] +
            [(t, f"n (operand 1) {program}") for t in threads])
        # Each thread prints in program order: its 1-D line before its 2-D lines before its
        # scalars.
        for t in threads:
            kinds = ["x" if " x " in text else "sq" if "sq=" in text else "n"
                     for u, text in mine if u == t]
            assert kinds == sorted(kinds, key=["x", "sq", "n"].index), kinds
