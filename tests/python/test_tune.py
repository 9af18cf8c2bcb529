"""metile.select on the host target with fake clocks: the headroom boundaries, ties, an
inconclusive tournament, gate, compile and unsupported failures, cached decisions calling the
winner directly (counted), persistence across processes, concurrent writers, a corrupt entry,
a changed source fingerprint, another dtype, clearing, METILE_DEBUG=tune."""

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import metile
from metile.tune import store

from conftest import REPO


@pytest.fixture(autouse=True)
def tune_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("METILE_TUNE_CACHE", str(tmp_path / "tune-cache"))
    return tmp_path / "tune-cache"


def double(x):
    return x * 2


def double_again(x):
    return x + x


class Clock:
    """A fake clock: each entrant's seconds by name; counts the calls."""

    def __init__(self, **seconds):
        self.seconds, self.calls = seconds, 0

    def __call__(self, name, fn, args):
        self.calls += 1
        return self.seconds[name]


def select(candidates, clock, **kwargs):
    """A selector of double() and the candidates on a fake clock; persistent only if asked."""
    kwargs.setdefault("family", "double")
    kwargs.setdefault("persist", False)
    return metile.select(native=double, candidates=candidates, timer=clock, warmup=1,
                         samples=3, **kwargs)


X = np.arange(8, dtype=np.float32)


@pytest.mark.parametrize("boundary, headroom", [("primitive", 1.05), ("graph", 1.10),
                                                ("quantized_mlp", 1.10)])
def test_switching_needs_the_boundarys_headroom_exactly(boundary, headroom):
    at = select([double_again], Clock(native=headroom, double_again=1.0), boundary=boundary)
    np.testing.assert_array_equal(at(X), X * 2)
    assert at.report["decision"] == "generated" and at.report["winner"] == "double_again"
    assert at.report["selector"]["headroom"] == pytest.approx(headroom - 1)
    below = select([double_again], Clock(native=headroom - 1e-4, double_again=1.0),
                   boundary=boundary)
    below(X)
    assert below.report["decision"] == "native"
    assert below.report["reason"].startswith("native kept: no candidate has the ")


def test_a_tie_keeps_the_native_operation():
    selected = select([double_again], Clock(native=1.0, double_again=1.0))
    selected(X)
    assert selected.report["selector"]["why"] == "no_headroom"
    assert selected.report["winner"] == "native"


def test_split_rounds_are_inconclusive_and_keep_the_native_operation():
    # warm-up, provisional, then three finalist rounds won by native, a and b in turn
    phases = [{"native": 9, "a": 9, "b": 9}, {"native": 10, "a": 5, "b": 6},
              {"native": 10, "a": 20, "b": 20}, {"native": 10, "a": 5, "b": 6},
              {"native": 10, "a": 6, "b": 5}]
    calls = []

    def clock(name, fn, args):
        calls.append(name)
        return phases[(len(calls) - 1) // 3][name]

    selected = metile.select(native=double, candidates=[metile.tune.Candidate(double_again, "a"),
                                                        metile.tune.Candidate(double_again, "b")],
                             family="double", timer=clock, warmup=1, samples=1)
    selected(X)
    assert selected.report["selector"]["why"] == "inconclusive"
    assert [r["winner"] for r in selected.report["selector"]["rounds"]] == ["native", "a", "b"]
    assert selected.report["reason"].startswith("native kept: the tournament was inconclusive")


def wrong(x):
    return x * 2 + 1e-3


def nan_at_two(x):
    y = x * 2
    y[2] = np.nan
    return y


def test_a_candidate_that_fails_the_gate_is_recorded_with_its_error():
    clock = Clock(native=1.0, wrong=0.1, nan_at_two=0.1)
    selected = select([wrong, nan_at_two], clock)
    np.testing.assert_array_equal(selected(X), X * 2)
    assert clock.calls == 0  # nothing was left to time
    gate = selected.report["gate"]
    assert gate["wrong"][0]["error"] == pytest.approx(1e-3 / 14, rel=1e-3)
    assert gate["nan_at_two"][0]["reason"] == ("output 0: a NaN where the native output is a "
                                               "number at element 2 (native 4, candidate nan)")
    assert selected.report["reason"].startswith(
        "native kept: candidate wrong failed the gate with error 7.15e-05 (output 0: "
        "scale-normalised error 7.15e-05 exceeds the f32 tolerance 1e-05); candidate "
        "nan_at_two failed the gate")


def test_matching_nan_and_infinity_positions_pass_the_gate():
    x = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    selected = select([double_again], Clock(native=1.0, double_again=0.5))
    selected(x)
    assert selected.report["decision"] == "generated"
    assert selected.report["gate"]["double_again"][0]["passed"]


def test_shape_and_output_count_mismatches_fail_the_gate():
    def flat(x):
        return (x * 2).reshape(2, 4)

    def pair(x):
        return x * 2, x

    selected = select([flat, pair], Clock(native=1.0, flat=0.1, pair=0.1))
    selected(X)
    reason = selected.report["reason"]
    assert "candidate flat failed the gate with error inf (output 0 is f32[2, 4], the native " \
           "one f32[8])" in reason
    assert "candidate pair failed the gate with error inf (it returned 2 outputs, the native " \
           "operation 1)" in reason


@metile.kernel
def scale2(x, y, n, BLOCK: metile.constexpr):
    offsets = metile.program_id(0) * BLOCK + metile.arange(0, BLOCK)
    mask = offsets < n
    metile.store(y + offsets, metile.load(x + offsets, mask) * 2.0, mask)


def kernel_candidate(block):
    def run(x):
        y = np.empty_like(x)
        scale2[(metile.cdiv(x.size, block),)](x, y, x.size, BLOCK=block)
        return y

    return metile.tune.Candidate(run, f"scale2[BLOCK={block}]")


def test_compile_failures_and_unsupported_candidates_keep_the_native_operation():
    def unsupported(x):
        raise metile.NotSupportedError("bf16 needs MSL 3.1")

    selected = select([kernel_candidate(3), unsupported], Clock(native=1.0))
    np.testing.assert_array_equal(selected(X), X * 2)
    candidates = selected.report["selector"]["candidates"]
    assert [c["verdict"] for c in candidates] == ["ready", "compile_failed", "unsupported"]
    assert "arange: the tile size end - start = 3 must be a positive power of two" in \
        candidates[1]["detail"]
    assert "candidate unsupported is not supported here: bf16 needs MSL 3.1" in \
        selected.report["reason"]


class Counted:
    def __init__(self, fn):
        self.fn, self.calls = fn, 0
        self.__name__ = fn.__name__

    def __call__(self, *args):
        self.calls += 1
        return self.fn(*args)


def test_a_cached_decision_calls_the_winner_directly():
    native, generated = Counted(double), Counted(kernel_candidate(16).fn)
    clock = Clock(native=2.0, run=1.0)
    selected = metile.select(native=native, candidates=[generated], family="double",
                             timer=clock, samples=3, persist=False)
    selected(X)
    timed, compiles = clock.calls, scale2.stats.compiles
    assert selected.report["decision"] == "generated"
    assert (native.calls, generated.calls) == (1, 1)  # each ran once, for the gate
    for _ in range(3):
        np.testing.assert_array_equal(selected(X), X * 2)
    assert (clock.calls, native.calls, generated.calls) == (timed, 1, 4)
    assert scale2.stats.compiles == compiles  # the compiled specialisation, not a new one
    assert selected.stats.memory_hits == 3 and selected.stats.generated_calls == 3
    assert json.loads(selected.explain())["source"] == "memory"

    kept = metile.select(native=native, candidates=[generated], family="double",
                         timer=Clock(native=1.0, run=1.0), persist=False)
    kept(X)
    before = generated.calls
    kept(X)
    assert generated.calls == before and kept.stats.native_calls == 1


def test_another_dtype_is_decided_again_never_reused():
    clock = Clock(native=2.0, double_again=1.0)
    selected = select([double_again], clock)
    selected(X)
    selected(X.astype(np.float16))
    selected(X[:4])  # another shape
    assert selected.stats.decisions == 3
    assert selected.report["arguments"] == [["numpy", "f32", [4], [1]]]


def test_a_stored_decision_is_used_by_a_new_selector_and_a_corrupt_one_rebuilt(tune_cache):
    first = select([double_again], Clock(native=2.0, double_again=1.0), persist=True)
    first(X)
    assert first.report["persisted"]
    entry = tune_cache / (first.report["key"] + ".json")
    assert entry.read_bytes().startswith(b"metile-tune " + first.report["key"].encode())

    clock = Clock(native=2.0, double_again=1.0)
    second = select([double_again], clock, persist=True)
    second(X)
    assert (clock.calls, second.stats.disk_hits, second.report["source"]) == (0, 1, "disk")

    data = bytearray(entry.read_bytes())
    data[-5] ^= 1  # one flipped bit in the body: the checksum fails
    entry.write_bytes(bytes(data))
    third = select([double_again], Clock(native=2.0, double_again=1.0), persist=True)
    third(X)
    assert third.stats.decisions == 1 and third.report["source"] == "measured"
    entry.write_bytes(b"\xff\xfe not an entry")
    fourth = select([double_again], Clock(native=2.0, double_again=1.0), persist=True)
    fourth(X)
    assert fourth.stats.decisions == 1
    assert store.load(json.loads(entry.read_bytes().split(b"\n", 1)[1])["key"]) is not None


def test_clear_cache_and_the_command_line(tune_cache):
    select([double_again], Clock(native=2.0, double_again=1.0), persist=True)(X)
    assert metile.tune.clear_cache() == 1
    select([double_again], Clock(native=2.0, double_again=1.0), persist=True)(X)
    result = subprocess.run([sys.executable, "-m", "metile.tune", "--clear"],
                            capture_output=True, text=True, check=True)
    assert result.stdout == f"metile.tune: removed 1 decisions from {tune_cache}\n"
    assert os.listdir(tune_cache) == []


PROGRAM = """
import numpy as np
import metile

def native(x):
    return x * 2

def candidate(x):
    return x + x  # VERSION

calls = []
def clock(name, fn, args):
    calls.append(name)
    return {"native": 2.0, "candidate": 1.0}[name]

selected = metile.select(native=native, candidates=[candidate], family="double", timer=clock)
y = selected(np.arange(8, dtype=np.float32))
assert (y == np.arange(8) * 2).all()
print(selected.report["source"], selected.report["winner"], len(calls))
"""


def run_program(path, env):
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          env=env, check=True).stdout.strip()


def test_decisions_persist_across_processes_until_the_source_changes(tmp_path, tune_cache):
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    env = dict(os.environ, METILE_TUNE_CACHE=str(tune_cache))
    first = run_program(program, env)
    assert first.startswith("measured candidate ") and first != "measured candidate 0"
    assert run_program(program, env) == "disk candidate 0"
    program.write_text(PROGRAM.replace("# VERSION", "# VERSION 2"))
    assert run_program(program, env).startswith("measured candidate ")
    assert len(os.listdir(tune_cache)) == 2


def write_and_read(writer, cache, start):
    """One of the concurrent writers: once all are ready, stores and reads back the same key
    again and again."""
    os.environ["METILE_TUNE_CACHE"] = cache
    fields = {"family": "concurrent"}
    start.wait()
    for _ in range(500):
        assert store.save(fields, {"winner": "native", "report": {"writer": writer}})
        record = store.load(fields)
        assert record is not None and record["winner"] == "native", record


def test_concurrent_writers_never_leave_a_damaged_entry(tune_cache):
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(3)
    writers = [context.Process(target=write_and_read, args=(i, str(tune_cache), start))
               for i in range(3)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(timeout=120)
    assert [w.exitcode for w in writers] == [0, 0, 0]
    assert [n for n in os.listdir(tune_cache) if n.endswith(".tmp")] == []
    assert store.load({"family": "concurrent"})["report"]["writer"] in (0, 1, 2)


def test_metile_debug_tune_prints_and_saves_the_decision(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("METILE_DEBUG", "tune")
    monkeypatch.setenv("METILE_DEBUG_DIR", str(tmp_path / "debug"))
    selected = select([double_again], Clock(native=2.0, double_again=1.0))
    selected(X)
    assert "metile.tune: double: double_again chosen: it won 2 of 2 finalist rounds" in \
        capsys.readouterr().err
    [saved] = os.listdir(tmp_path / "debug" / "tune")
    assert saved == f"double-{selected.report['key'][:16]}.json"
    assert json.loads((tmp_path / "debug" / "tune" / saved).read_text())["winner"] == \
        "double_again"


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="boundary must be one of primitive, graph"):
        metile.select(native=double, candidates=[], family="double", boundary="kernel")
    with pytest.raises(ValueError, match="candidate names must be distinct and not 'native'"):
        metile.select(native=double, candidates=[double_again, double_again], family="double")
    selected = metile.select(native=double, candidates=[], family="double", persist=False)
    np.testing.assert_array_equal(selected(X), X * 2)
    assert selected.report["reason"] == "native kept: there is no candidate"
