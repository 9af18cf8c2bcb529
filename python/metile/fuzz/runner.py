"""Runs one fuzz case: a valid program (trace, compile, launch, compare with the reference)
or a misuse (it must raise a user error with a message). A case is its seed: the same seed
gives the same program, data and verdict."""

import hashlib
import importlib.util
import sys
import tempfile
import traceback
from pathlib import Path

import numpy as np

from .. import errors
from ..buffer import Buffer
from . import misuse
from .programs import Program
from .reference import FLOATS

# A misuse must end in one of these (a user error), with a message; InternalCompilerError,
# any other exception, a crash or a hang is a finding.
USER_ERRORS = (errors.CompilationError, TypeError, ValueError)


class Finding(Exception):
    """What a case found: a wrong result, an internal error, or a misuse that passed."""


def load_kernel(source, name, folder):
    """The kernel ``name`` defined by ``source``, from a real file so that device loops can
    read their source."""
    path = Path(folder) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return getattr(module, name)


def compare(program, arrays, expected):
    """The mismatches between the launch's outputs and the reference, as text lines."""
    problems = []
    for name, dtype, pattern in program.outputs:
        got = np.asarray(arrays[name]).astype(np.float64 if dtype in FLOATS else np.int64)
        values, bounds, unknown = expected[name]
        if dtype in FLOATS:
            tolerance = 2 * bounds + 1e-30
            with np.errstate(invalid="ignore"):
                bad = ~unknown & ~(np.abs(got - values) <= tolerance)
        else:
            bad = ~unknown & (got != values)
        for i in np.flatnonzero(bad)[:4]:
            problems.append(f"{name}[{i}] ({dtype}, {pattern}): got {got[i]!r}, expected "
                            f"{values[i]!r}" + (f" +- {2 * bounds[i]:.3g}" if dtype in FLOATS
                                                else ""))
        if bad.sum() > 4:
            problems.append(f"{name}: {int(bad.sum())} elements differ in all")
    return problems


def _passed_as(array, form):
    """The array as a launch takes it: itself, a metile.Buffer, or a strided view of a larger
    array (which a launch copies in and back)."""
    if form == 1:
        return Buffer(data=array)
    if form == 2:
        spread = np.zeros(2 * len(array), array.dtype)
        spread[::2] = array
        return spread[::2]
    return array


def run_valid(seed, folder):
    """Traces, compiles and launches the valid program of ``seed``; raises Finding."""
    program = Program(seed)
    source = program.source()
    kernel = load_kernel(source, program.name, folder)
    rng = np.random.default_rng(seed + 1)
    arrays = program.arrays(rng)
    expected = program.expected({k: v.copy() for k, v in arrays.items()})
    passed = {name: _passed_as(array, rng.integers(4)) for name, array in arrays.items()}
    try:
        kernel[(program.grid,)](*program.launch_arguments(passed), **program.constexprs,
                                **program.options)
    except Exception as error:  # noqa: BLE001 - every exception of a valid program is one
        raise Finding(f"valid program raised {type(error).__name__}: {error}\n"
                      f"{traceback.format_exc(limit=-3)}\n{source}\noptions: "
                      f"{program.options}") from None
    for name, argument in passed.items():
        arrays[name] = argument.numpy() if isinstance(argument, Buffer) else argument
    problems = compare(program, arrays, expected)
    if problems:
        raise Finding("wrong result:\n  " + "\n  ".join(problems) + f"\n{source}\noptions: "
                      f"{program.options}")
    return program


def run_misuse(seed, folder):
    """Runs the misuse of ``seed``; raises Finding unless it gives a user error."""
    case = misuse.Misuse(seed)
    kernel = load_kernel(case.source, case.name, folder)
    try:
        case.launch(kernel)
    except errors.InternalCompilerError as error:
        raise Finding(f"misuse '{case.what}' raised InternalCompilerError: {error}\n"
                      f"{case.source}") from None
    except USER_ERRORS + (case.expected or ()) as error:
        if not str(error).strip():
            raise Finding(f"misuse '{case.what}' raised {type(error).__name__} without a "
                          f"message\n{case.source}") from None
        if case.expected and not isinstance(error, case.expected):
            raise Finding(f"misuse '{case.what}' raised {type(error).__name__}: {error}; "
                          f"expected {' or '.join(e.__name__ for e in case.expected)}\n"
                          f"{case.source}") from None
        return case, error
    except Exception as error:  # noqa: BLE001
        raise Finding(f"misuse '{case.what}' raised {type(error).__name__} (not a user "
                      f"error): {error}\n{traceback.format_exc(limit=-3)}\n{case.source}") from None
    if case.expected:
        raise Finding(f"misuse '{case.what}' ran without an error\n{case.source}")
    return case, None


def fingerprint(seed):
    """A short hash of the program or misuse that ``seed`` makes (for corpora)."""
    source = Program(seed).source() if seed % 2 == 0 else misuse.Misuse(seed).source
    return hashlib.sha256(source.encode()).hexdigest()[:12]


def run_case(seed, folder=None):
    """Case ``seed``: even seeds are valid programs, odd seeds misuses. Raises Finding."""
    with tempfile.TemporaryDirectory(prefix="metile-fuzz-") as scratch:
        folder = folder or scratch
        if seed % 2 == 0:
            return run_valid(seed, folder)
        return run_misuse(seed, folder)
