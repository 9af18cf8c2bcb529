"""One region of a compiled model at run time: the framework's own module (native) and the
meTile candidate enter the guarded runtime's selector (metile.select, boundary by region kind),
per decision key (the arguments' dtypes and shapes). decide="generated" still gates the
candidate against the native outputs but skips the timing: every region that passes runs
meTile's kernel (to test the kernels in place, or to see what they cost); decide="native"
runs the framework everywhere."""

from ..errors import CompilationError, KernelFaultError, NotSupportedError
from ..tune import Candidate, select
from ..tune.arrays import describe, host_values
from ..tune.selector import gate_outputs

DECISIONS = ("measured", "generated", "native")


class RegionRunner:
    def __init__(self, family, boundary, native, candidate, decide, persist):
        if decide not in DECISIONS:
            raise ValueError(f"metile.compile: decide must be one of {', '.join(DECISIONS)}, "
                             f"got {decide!r}")
        self.family, self.decide = family, decide
        self.native, self.candidate = native, candidate
        self.selected = select(native, [Candidate(candidate, "metile")], family=family,
                               boundary=boundary, persist=persist)
        self.decisions = {}  # key -> the decision's report, for explain()
        self.disabled = False  # the model's verification sent this region back to native
        self.decided = {}  # shapes and dtypes -> the winner's callable: a decided call's path
        self.kept_calls = {}  # reason -> calls the region left to the framework (explain())

    def __call__(self, *args):
        if self.decide == "native" or self.disabled:
            return self.native(*args)
        key = shape_key(args)
        winner = self.decided.get(key)
        if winner is not None:
            return winner(*args)
        if self.decide == "generated":
            return self._forced(args, key)
        result = self.selected(*args)
        report = self.selected.report
        self.decisions[report["key"]] = report
        self.decided[key] = self.candidate if report["winner"] == "metile" else self.native
        return result

    def _forced(self, args, key):
        """decide="generated": the first call with these shapes gates the candidate."""
        native_result = self.native(*args)
        decision = {"family": self.family, "source": "gated",
                    "arguments": [describe(a) for a in args]}
        try:
            result = self.candidate(*args)
        except (NotSupportedError, CompilationError, KernelFaultError) as e:
            decision.update(decision="native", winner="native",
                            reason=f"the candidate failed: {type(e).__name__}: {e}")
            result = native_result
        else:
            native_outputs = [host_values(v) for v in _outputs(native_result)]
            passed, _, _, reason, records = gate_outputs(native_outputs, result)
            decision.update(gate={"metile": records})
            if passed:
                decision.update(decision="generated", winner="metile",
                                reason="decide='generated': passed its gate, not timed")
            else:
                decision.update(decision="native", winner="native",
                                reason=f"the candidate failed its gate: {reason}")
                result = native_result
        self.decisions[repr(key)] = decision
        self.decided[key] = self.candidate if decision["winner"] == "metile" else self.native
        return result

    def keep(self, reason):
        """Records a call the region cannot take (its arguments are of another form) before the
        caller runs the framework's own function: explain() counts them by reason."""
        self.kept_calls[reason] = self.kept_calls.get(reason, 0) + 1

    def winner_for(self, args):
        """The decided winner for arguments of these shapes (a callable), or None."""
        if self.decide == "native" or self.disabled:
            return self.native
        return self.decided.get(shape_key(args))

    def generated_keys(self):
        return [k for k, d in self.decisions.items() if d.get("winner") == "metile"]


def shape_key(args):
    return tuple((tuple(a.shape), str(a.dtype)) if hasattr(a, "shape") else repr(a)
                 for a in args)


def _outputs(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]
