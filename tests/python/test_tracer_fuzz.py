"""The tracer fuzzer (metile.fuzz, docs/reliability.md "Fuzzing"): a short run of fresh
cases, the corpus of cases that found defects, and checks that its oracle can fail."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import metile
from metile.fuzz import Finding, fingerprint, run_case
from metile.fuzz import runner
from metile.fuzz.programs import Program

CORPUS = Path(__file__).resolve().parents[1] / "fuzz" / "corpus" / "tracer" / "seeds.txt"
SMOKE_SEEDS = range(0, 24)  # 12 valid programs and 12 misuses: about 10 s on the host


def corpus():
    for line in CORPUS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            seed, print_, _ = line.split(maxsplit=2)
            yield int(seed), print_


@pytest.mark.parametrize("seed", SMOKE_SEEDS)
def test_smoke(seed):
    run_case(seed)


@pytest.mark.parametrize("seed, recorded", list(corpus()))
def test_corpus(seed, recorded):
    assert fingerprint(seed) == recorded, (
        f"seed {seed} no longer makes the program it found a defect with: the generator "
        f"changed; find the case again and record its new seed")
    run_case(seed)


def test_a_wrong_output_is_a_finding(tmp_path):
    program = Program(0)
    kernel = runner.load_kernel(program.source(), program.name, tmp_path)
    arrays = program.arrays(np.random.default_rng(1))
    expected = program.expected({k: v.copy() for k, v in arrays.items()})
    kernel[(program.grid,)](*program.launch_arguments(arrays), **program.constexprs)
    assert runner.compare(program, arrays, expected) == []
    name, dtype, _ = program.outputs[0]
    arrays[name][0] += 1  # one element off by one: beyond every error bound
    problems = runner.compare(program, arrays, expected)
    assert problems and problems[0].startswith(f"{name}[0] ({dtype}")


def test_a_misuse_that_runs_is_a_finding(monkeypatch):
    seed = next(s for s in range(1, 400, 2) if runner.misuse.Misuse(s).how == "block")
    monkeypatch.setattr(runner.misuse.Misuse, "launch", lambda self, kernel: None)
    with pytest.raises(Finding, match="ran without an error"):
        run_case(seed)


def test_the_command_line_runs_cases_and_counts_them():
    done = subprocess.run([sys.executable, "-m", "metile.fuzz", "--seed", "1", "--count", "3"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "fuzz: 3 cases, 0 findings"


# Defects the fuzzer found, each reproduced directly.

@metile.kernel
def fused(x_ptr, y_ptr, z_ptr, out, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    x, y, z = (metile.load(p + offs) for p in (x_ptr, y_ptr, z_ptr))
    metile.store(out + offs, metile.fma(x, y, z))


def test_fma_promotes_its_three_operands_first_as_triton_does():
    # f16 x and y beside an f32 z multiply in f32 (the product of two f16 values is exact
    # there); the product used to be rounded to f16 first (seeds 1446, 1564, 1640, 1816).
    rng = np.random.default_rng(5)
    x, y = (rng.uniform(-2, 2, 64).astype(np.float16) for _ in range(2))
    z = rng.uniform(-2, 2, 64).astype(np.float32)
    out = np.zeros(64, np.float32)
    fused[(1,)](x, y, z, out, BLOCK=64)
    assert np.array_equal(out, x.astype(np.float32) * y.astype(np.float32) + z)


@metile.kernel
def select_negated(x_ptr, out, BLOCK: metile.constexpr):
    offs = metile.arange(0, BLOCK)
    x = metile.load(x_ptr + offs)
    metile.store(out + offs, metile.where(~(x > 0), -x, x))


def test_invert_of_a_boolean_is_a_boolean():
    # ~ of an i1 gave an i32, which where() refused as a condition (seed 1330).
    x = np.array([-3, 0, 2, -1, 5, 7, -8, 1], np.int32)
    out = np.zeros(8, np.int32)
    select_negated[(1,)](x, out, BLOCK=8)
    assert out.tolist() == np.abs(x).tolist()
    inverts = [line for line in select_negated.trace(x, out, BLOCK=8).print().splitlines()
               if " xor " in line]
    assert inverts and all(line.endswith("tile<8xi1>") or "tile<8xi1> loc" in line
                           for line in inverts)


@pytest.mark.parametrize("child, timeout, found, next_seed", [
    ("import os; print('start 7\\nok 7\\nstart 8', flush=True); os.abort()", 60, "crash", 9),
    ("import time; print('start 3', flush=True); time.sleep(60)", 1, "hang", 4),
])
def test_the_command_line_reports_a_crash_or_a_hang_and_goes_on(monkeypatch, child, timeout,
                                                                found, next_seed):
    from metile.fuzz import __main__ as command_line

    monkeypatch.setattr(command_line, "_worker_command",
                        lambda first, count: [sys.executable, "-c", child])
    reports = []
    seed, ran = command_line._run_batch(first=next_seed - 2, count=10, timeout=timeout,
                                        deadline=None, report=lambda *r: reports.append(r))
    assert seed == next_seed
    assert [(s, text.split(":")[0]) for s, text in reports] == [(next_seed - 1, found)]


@metile.kernel
def scan_rows(x_ptr, out, M: metile.constexpr, N: metile.constexpr, AXIS: metile.constexpr):
    offs = metile.arange(0, M)[:, None] * N + metile.arange(0, N)[None, :]
    metile.store(out + offs, metile.cumsum(metile.load(x_ptr + offs), axis=AXIS))


@pytest.mark.parametrize("m, n, axis, dtype, warps", [
    (1, 64, 1, np.int32, 4), (1, 128, 1, np.float32, 8), (8, 8, 0, np.float32, 4),
    (4, 16, 1, np.int32, 8)])
def test_a_scan_of_a_tile_smaller_than_the_threadgroup(m, n, axis, dtype, warps):
    # The threads that own no element read past the scan's exchange scratch: an
    # InternalCompilerError from verify_scratch (num_warps=4 on 64 elements, seed 10).
    x = np.random.default_rng(3).integers(-5, 6, (m, n)).astype(dtype)
    out = np.zeros_like(x)
    scan_rows[(1,)](x, out, M=m, N=n, AXIS=axis, num_warps=warps)
    np.testing.assert_allclose(out, np.cumsum(x, axis=axis), rtol=1e-6)


@metile.kernel
def transpose_mask(x_ptr, out, M: metile.constexpr, N: metile.constexpr):
    offs = metile.arange(0, M)[:, None] * N + metile.arange(0, N)[None, :]
    positive = metile.load(x_ptr + offs) > 0
    transposed = metile.arange(0, N)[:, None] * M + metile.arange(0, M)[None, :]
    metile.store(out + transposed, metile.trans(positive))


@pytest.mark.parametrize("m, n, warps", [(4, 8, 1), (8, 8, 1), (32, 32, 4), (16, 4, 8)])
def test_trans_of_a_boolean_tile(m, n, warps):
    # A transpose within a SIMD group shuffled the i1 values themselves, which MSL's SIMD
    # functions refuse: a CompilationError from the emitter (seed 202320).
    x = np.random.default_rng(0).integers(-3, 4, (m, n)).astype(np.int32)
    out = np.zeros((n, m), np.int32)
    transpose_mask[(1,)](x, out, M=m, N=n, num_warps=warps)
    assert np.array_equal(out, (x > 0).T)
