"""metile.compile(model): capture the model's regions, build their kernels, gate and measure
each against the framework's own module (the guarded runtime), install the winners, and verify
the whole model by its logits. The model object itself is compiled in place (its regions'
classes are swapped); CompiledModel calls it and reports on it."""

import contextlib
import json
import sys
import time

from . import dispatch, regions as region_tools, verify
from .kernels import RegionKernels


def _front(model):
    from . import mlx_front, torch_front

    for front in (mlx_front, torch_front):
        if front.is_model(model):
            return front
    raise TypeError(f"metile.compile: expected an mlx.nn.Module or a torch.nn.Module, got "
                    f"{type(model).__name__}")


class Progress:
    """One line per step on stderr (a line that rewrites itself on a terminal)."""

    def __init__(self, enabled):
        self.enabled = enabled
        self.tty = enabled and sys.stderr.isatty()
        self.count = 0

    def __call__(self, message):
        if not self.enabled:
            return
        self.count += 1
        text = f"metile.compile [{self.count}] {message}"
        if self.tty:
            sys.stderr.write("\r\033[K" + text)
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def done(self):
        if self.tty and self.count:
            sys.stderr.write("\n")


class CompiledModel:
    """The compiled model: call it as the model; explain() says what runs where and why."""

    def __init__(self, model, front, regions, kept, kernels, decide, progress):
        self.model, self.front = model, front
        self.regions, self.kept = regions, kept
        self.kernels, self.decide = kernels, decide
        self.progress = progress
        self.phases = {}  # seconds of the first compile, by phase
        self.verification = None
        self.fallbacks = []  # regions the model's verification sent back to the framework

    def __call__(self, *args, **kwargs):
        return self.model(*args, **kwargs)

    def __getattr__(self, name):  # the model's own attributes (make_cache, layers, ...)
        model = self.__dict__.get("model")
        if model is None:
            raise AttributeError(name)
        return getattr(model, name)

    @contextlib.contextmanager
    def native(self):
        """Inside it, every region runs the framework's module (the reference)."""
        saved = [(r.runner.decide, r.runner) for r in self.regions]
        for r in self.regions:
            r.runner.decide = "native"
        try:
            yield
        finally:
            for decide, runner in saved:
                runner.decide = decide

    def restore(self):
        """Puts every region's module back as it was: the model is the framework's again."""
        for r in self.regions:
            (r.uninstall or region_tools.uninstall)(r)

    def warm(self, *args, **kwargs):
        """One call (deciding every region it reaches), timed into the compile's phases."""
        started, compiled_before = time.perf_counter(), self.kernels.compile_seconds
        result = self(*args, **kwargs)
        kernels = self.kernels.compile_seconds - compiled_before
        self.phases["kernels"] = self.phases.get("kernels", 0.0) + kernels
        self.phases["gate_and_measure"] = (self.phases.get("gate_and_measure", 0.0) +
                                           time.perf_counter() - started - kernels)
        return result

    def verify(self, prompt, steps=32, kl_limit=None):
        """Runs `prompt` (token ids) and `steps` greedy steps through the framework's model and
        the compiled one and compares their logits (verify.py). If the model fails, each
        region running meTile's kernels is tried alone; those that break the model go back to
        the framework (named in explain()'s fallbacks), and the model is verified again.
        `kl_limit` replaces the KL bound of the activation dtype (verify.KL_LIMITS)."""
        started = time.perf_counter()
        with self.native():
            reference, tokens = verify.run_steps(self.front, self.model, prompt, steps)
        dtype = self.front.activation_dtype(self.model)

        def check():
            logits, _ = verify.run_steps(self.front, self.model, prompt, steps, tokens)
            return verify.compare(reference, logits, tokens, dtype, steps, kl_limit)

        result = check()
        if not result["passed"]:
            self.progress(f"model verification failed ({_summary(result)}): testing regions "
                          "one by one")
            generated = [r for r in self.regions if r.runner.generated_keys()]
            for r in generated:
                r.runner.disabled = True
            for r in generated:
                r.runner.disabled = False
                alone = check()
                if not alone["passed"]:
                    r.runner.disabled = True
                    self.fallbacks.append({"region": r.path, "kind": r.kind,
                                           "verification": alone})
            result = dict(check(), first_attempt=result)
        self.verification = result
        self.phases["verify"] = time.perf_counter() - started
        self.progress(f"verified: {_summary(result)}")
        self.progress.done()
        return result

    def report(self):
        regions = []
        for r in self.regions:
            decisions = [{"arguments": d.get("arguments"), "decision": d.get("decision"),
                          "winner": d.get("winner"), "reason": d.get("reason"),
                          "source": d.get("source"), "gate": d.get("gate")}
                         for d in r.runner.decisions.values()]
            regions.append({"region": r.path, "kind": r.kind, "boundary": r.boundary,
                            "module": type(r.module).__name__, "kernels": r.kernels,
                            "disabled_by_verification": r.runner.disabled,
                            "calls_kept_in_framework": r.runner.kept_calls,
                            "decisions": decisions or "not called yet"})
        return {"framework": self.front.FRAMEWORK, "model": type(self.model).__name__,
                "decide": self.decide, "regions": regions,
                "kept_in_framework": [vars(k) for k in self.kept],
                "kernels_compiled": len(self.kernels.graphs),
                "compile_phases_s": self.phases, "verification": self.verification,
                "fallbacks": self.fallbacks}

    def explain(self):
        """JSON: every region (its module, kernels, gate results and measured decisions), what
        stays in the framework and why, the first compile's time by phase, the verification."""
        return json.dumps(self.report(), indent=2, default=str)

    def decisions(self):
        """[(region path, kind, decision, reason)] of every decision made so far."""
        return [(r.path, r.kind, d.get("winner"), d.get("reason"))
                for r in self.regions for d in r.runner.decisions.values()]


def _summary(result):
    return (f"agreement {result['agreement']}/{result['steps']}, KL {result['kl']:.2e}, "
            f"max |logits error| {result['max_abs_error']:.2e}")


def compile_model(model, example_inputs=None, *, decide="measured", persist=True, device="",
                  progress=True):
    """Compiles `model` (an mlx.nn.Module or a torch.nn.Module) in place and returns a
    CompiledModel calling it. Each region meTile finds (norms, linears, SwiGLU MLPs, rotary,
    embeddings, quantised linears and MLPs) runs meTile's kernel where it passes the numerical
    gate and wins by the guarded runtime's headroom, per argument shape and dtype, else the
    framework's module (`decide="generated"`: every region that passes its gate runs meTile's
    kernel, untimed; `"native"`: none). `example_inputs` (a tuple of the model's arguments)
    are run once now, so kernels are compiled and decisions made before the first real call.
    `persist` keeps decisions across processes (metile.tune's store)."""
    show = Progress(progress)
    front = _front(model)
    started = time.perf_counter()
    kernels = RegionKernels(device, on_compile=lambda label, s: show(f"compiled {label} "
                                                                     f"({s:.1f} s)"))
    regions, kept = front.find_regions(model, kernels)
    for region in regions:
        candidate = region.candidate

        def labelled(*args, _region=region, _candidate=candidate):
            kernels.current = _region
            try:
                return _candidate(*args)
            finally:
                kernels.current = None

        region.runner = dispatch.RegionRunner(f"model.{region.kind}", region.boundary,
                                              region.native, labelled, decide, persist)
        (region.install or region_tools.install)(region, front.CALL)
    compiled = CompiledModel(model, front, regions, kept, kernels, decide, show)
    compiled.phases["capture"] = time.perf_counter() - started
    show(f"{front.FRAMEWORK} {type(model).__name__}: {len(regions)} regions, "
         f"{len(kept)} parts kept in {front.FRAMEWORK}")
    if example_inputs is not None:
        compiled.warm(*example_inputs)
        show(f"decided: {sum(1 for d in compiled.decisions() if d[2] == 'metile')} of "
             f"{len(compiled.decisions())} decisions run meTile's kernels")
        show.done()
    return compiled
