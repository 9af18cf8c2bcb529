"""metile.select: the guarded runtime's selector in Python (seed 001, "Guarded Runtime";
docs/tuning.md). The native operation and generated candidates enter one selector; on the
first call with a new decision key, each candidate's outputs pass the numerical gate against
the native outputs on the same arguments, the ready ones enter the tournament (the C++
selector, metile/tune/selector.h, timed by this module's timer) and the decision is stored
(store.py). Later calls with an equal key call the winner directly: the native operation
itself, or the generated candidate, without gating or timing again.
"""

import json
from dataclasses import dataclass

from .. import _core
from ..errors import CompilationError, KernelFaultError, NotSupportedError
from . import keys, report, store
from .arrays import describe, host_values
from .timing import time_call

NATIVE = "native"
_BOUNDARIES = ("primitive", "graph", "quantized_mlp")


class Candidate:
    """A generated candidate: `fn` takes the native operation's arguments and returns the
    same outputs (it allocates them and launches a meTile kernel); `name` names it in
    reports (default: fn's __name__)."""

    def __init__(self, fn, name=None):
        if not callable(fn):
            raise TypeError(f"metile.tune.Candidate: fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", None)
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("metile.tune.Candidate: give the candidate a name")

    def __repr__(self):
        return f"Candidate({self.name!r})"


@dataclass
class SelectStats:
    decisions: int = 0  # keys decided by gating and timing
    gates: int = 0  # candidates gated
    timings: int = 0  # timer calls
    memory_hits: int = 0  # calls decided by a decision made in this process
    disk_hits: int = 0  # keys decided by a stored decision
    native_calls: int = 0  # calls of a decided key served by the native operation
    generated_calls: int = 0  # calls of a decided key served by a generated candidate


def _outputs(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def gate_outputs(native_outputs, outputs):
    """(passed, worst error, tolerance, reason, per-output records) of a candidate's outputs."""
    outputs = _outputs(outputs)
    if len(outputs) != len(native_outputs):
        reason = f"it returned {len(outputs)} outputs, the native operation {len(native_outputs)}"
        return False, float("inf"), 0.0, reason, []
    records, worst = [], (True, 0.0, 0.0, "")
    for index, ((native, dtype, shape), output) in enumerate(zip(native_outputs, outputs)):
        values, candidate_dtype, candidate_shape = host_values(output)
        tolerance = _core.gate_tolerance(dtype)
        if candidate_shape != shape or candidate_dtype != dtype:
            passed, error = False, float("inf")
            reason = (f"output {index} is {candidate_dtype}{list(candidate_shape)}, the native "
                      f"one {dtype}{list(shape)}")
        else:
            passed, error, tolerance, reason = _core.gate_output(native, values, dtype)
            reason = f"output {index}: {reason}" if reason else ""
        records.append({"output": index, "dtype": dtype, "passed": passed,
                        "error": error if error != float("inf") else "inf",
                        "tolerance": tolerance, "reason": reason})
        if worst[0] and (not passed or error > worst[1]):
            worst = (passed, error, tolerance, reason)
    return worst + (records,)


class Selected:
    """What metile.select returns: call it like the native operation."""

    def __init__(self, native, candidates, family, boundary, policy, timer, warmup, samples,
                 finalists, persist):
        if not callable(native):
            raise TypeError("metile.select: native must be callable (the framework operation)")
        if boundary not in _BOUNDARIES:
            raise ValueError(f"metile.select: boundary must be one of {', '.join(_BOUNDARIES)}, "
                             f"got {boundary!r}")
        if not isinstance(family, str) or not family:
            raise ValueError("metile.select: family names the operation, e.g. 'rms_norm'")
        self.native = native
        self.candidates = [c if isinstance(c, Candidate) else Candidate(c) for c in candidates]
        names = [c.name for c in self.candidates]
        if NATIVE in names or len(set(names)) != len(names):
            raise ValueError(f"metile.select: candidate names must be distinct and not "
                             f"'{NATIVE}', got {names}")
        self.family, self.boundary = family, boundary
        self.policy = {str(k): repr(v) for k, v in sorted((policy or {}).items())}
        self._timer = timer
        self._options = (int(warmup), int(samples), int(finalists))
        self._persist = persist
        self._constant = None  # the key's fields that do not depend on the arguments
        self._decided = {}  # entry -> (winner index, report)
        self._last = None
        self.stats = SelectStats()

    def _fields(self, args):
        if self._constant is None:  # once: a function's source is read when first called
            entrants = [[NATIVE, keys.fingerprint(self.native)]]
            entrants += [[c.name, keys.fingerprint(c.fn)] for c in self.candidates]
            self._constant = {"family": self.family, "boundary": self.boundary,
                              "environment": keys.environment(), "entrants": entrants,
                              "policy": self.policy, "tolerances": keys.tolerances()}
        return dict(self._constant, arguments=[describe(a) for a in args])

    def __call__(self, *args):
        fields = self._fields(args)
        entry = store.entry_name(fields)
        decided = self._decided.get(entry)
        if decided is not None:
            self.stats.memory_hits += 1
        else:
            persistable = self._persist and all(f is not None for _, f in fields["entrants"])
            stored = store.load(fields) if persistable else None
            winner = self._index(stored["winner"]) if stored else None
            if winner is not None:
                self.stats.disk_hits += 1
                decided = (winner, dict(stored["report"], source="disk"))
                self._decided[entry] = decided
            else:
                result, decided = self._decide(args, fields, entry, persistable)
                self._decided[entry] = decided
                self._last = (decided[1], "measured")
                return result
        self._last = (decided[1], "disk" if decided[1]["source"] == "disk" else "memory")
        winner = decided[0]
        if winner == 0:
            self.stats.native_calls += 1
            return self.native(*args)
        self.stats.generated_calls += 1
        return self.candidates[winner - 1].fn(*args)

    def _index(self, name):
        if name == NATIVE:
            return 0
        for i, c in enumerate(self.candidates):
            if c.name == name:
                return i + 1
        return None

    def _decide(self, args, fields, entry, persistable):
        self.stats.decisions += 1
        native_result = self.native(*args)
        native_outputs = [host_values(v) for v in _outputs(native_result)]
        rows = [(NATIVE, "ready", "", False, True, 0.0, 0.0, "")]
        results, gates = [native_result], {}
        for c in self.candidates:
            try:
                result = c.fn(*args)
            except NotSupportedError as e:
                rows.append((c.name, "unsupported", str(e), False, True, 0.0, 0.0, ""))
                results.append(None)
                continue
            except CompilationError as e:
                rows.append((c.name, "compile_failed", str(e), False, True, 0.0, 0.0, ""))
                results.append(None)
                continue
            except KernelFaultError as e:
                rows.append((c.name, "gate_failed", "", True, False, float("inf"), 0.0,
                             f"it faulted: {e}"))
                results.append(None)
                continue
            self.stats.gates += 1
            passed, error, tolerance, reason, records = gate_outputs(native_outputs, result)
            gates[c.name] = records
            rows.append((c.name, "ready" if passed else "gate_failed", "", True, passed, error,
                         tolerance, reason))
            results.append(result)
        fns = [self.native] + [c.fn for c in self.candidates]
        names = [r[0] for r in rows]

        def timer(i):
            self.stats.timings += 1
            if self._timer is None:
                return time_call(fns[i], args)
            return float(self._timer(names[i], fns[i], args))

        warmup, samples, finalists = self._options
        winner, selector_json = _core.select(rows, timer, self.boundary, 0.0, warmup, samples,
                                             finalists)
        selection = json.loads(selector_json)
        decision = {"family": self.family, "boundary": self.boundary, "key": entry,
                    "decision": "generated" if winner else "native", "winner": names[winner],
                    "reason": selection["reason"], "source": "measured",
                    "persisted": False, "gate": gates, "selector": selection,
                    "arguments": fields["arguments"]}
        if persistable:
            decision["persisted"] = store.save(fields, {"winner": names[winner],
                                                        "report": decision})
        report.publish(self.family, entry, decision)
        return results[winner], (winner, decision)

    @property
    def report(self):
        """The decision behind the latest call (a dict), or None before the first call."""
        if self._last is None:
            return None
        decision, source = self._last
        return dict(decision, source=source)

    def explain(self):
        """The decision behind the latest call as formatted JSON: the candidates and their
        gate errors, the timings per round, the headroom, the winner and why (source:
        measured, disk or memory)."""
        if self._last is None:
            return json.dumps({"family": self.family, "decision": None,
                               "reason": "not called yet: a decision is made on the first call "
                                         "(or for example_args)"}, indent=2)
        return json.dumps(self.report, indent=2)


def select(native, candidates, example_args=None, *, family, boundary="primitive", policy=None,
           timer=None, warmup=1, samples=5, finalists=2, persist=True):
    """A callable that runs whichever of `native` (the framework operation) and the generated
    `candidates` (Candidate objects, or callables named by __name__) is correct and measurably
    faster, per decision key (docs/tuning.md). `family` names the operation ("rms_norm");
    `boundary` sets the headroom ("primitive": 5%, "graph" and "quantized_mlp": 10%);
    `policy` records compile-policy overrides the candidates were built with (part of the
    key). `example_args`, if given, are decided now. `timer(name, fn, args)` returns the
    seconds of one synchronised call (default: CUDA events for torch CUDA arguments, else the
    wall clock). Decisions persist across processes unless persist=False."""
    selected = Selected(native, candidates, family, boundary, policy, timer, warmup, samples,
                        finalists, persist)
    if example_args is not None:
        selected(*example_args)
    return selected
