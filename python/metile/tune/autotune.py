"""@metile.autotune: Triton's @triton.autotune for a @metile.kernel (docs/tuning.md).

``kernel[grid](*args)`` measures every configuration when the tuning key (the values of the
`key` arguments and the dtypes of the buffers) is new in this process and no stored decision
matches; later launches with that key use the winner. Configurations are canonicalised under
the declared symmetries first (symmetry.py), those that fail to compile or to launch
(OutOfResources) are reported on stderr and pruned, and the survivors enter the selector's
tournament (metile/tune/selector.h) in the order of the target operation-cost model
(cost_model.py), with no headroom: the model's first configuration is the reference, and a
faster one must win two interleaved rounds to replace it; `cost_model_top=k` measures only
the model's first k. Progress is shown on stderr when tuning takes longer than a second.
"""

import json
import sys
import time
from dataclasses import dataclass

from .. import _core
from ..errors import CompilationError, NotSupportedError
from ..kernel import OPTIONS, KernelFunction
from . import cost_model, keys, report, store
from .arrays import describe, dtype_of
from .config import Config
from .symmetry import Symmetry, canonicalise

_PROGRESS_AFTER_S = 1.0


def _described(value):
    """describe(value), or the repr of a constexpr it cannot describe (a ThreadLayout)."""
    try:
        return describe(value)
    except TypeError:
        return ["value", repr(value)]


@dataclass
class AutotuneStats:
    tunings: int = 0  # tuning keys measured
    timings: int = 0  # timer calls
    memory_hits: int = 0  # launches served by a winner found in this process
    disk_hits: int = 0  # tuning keys served by a stored winner


class _Progress:
    """Prints on stderr once tuning has taken longer than a second, then at most every second."""

    def __init__(self, name, count):
        self.name, self.count = name, count
        self.started = self.last = time.perf_counter()
        self.shown = False

    def tick(self, runs):
        now = time.perf_counter()
        if now - self.started > _PROGRESS_AFTER_S and now - self.last > _PROGRESS_AFTER_S:
            print(f"metile.autotune: {self.name}: measuring {self.count} configurations, "
                  f"{runs} runs, {now - self.started:.0f} s", file=sys.stderr, flush=True)
            self.last, self.shown = now, True

    def done(self, best):
        if self.shown:
            print(f"metile.autotune: {self.name}: chose {best!r} after "
                  f"{time.perf_counter() - self.started:.1f} s", file=sys.stderr, flush=True)


class Autotuner:
    """A @metile.kernel with configurations to choose from. Launch it as the kernel:
    ``tuned[grid](*args, **kwargs)``; ``best_config`` is the latest winner and explain() the
    latest decision as JSON."""

    def __init__(self, kernel, configs, key, prune_configs_by, symmetries, timer, warmup,
                 samples, persist, cost_model_top=None):
        if not isinstance(kernel, KernelFunction):
            raise TypeError("metile.autotune wraps a @metile.kernel (put @metile.autotune above "
                            "@metile.kernel)")
        configs = list(configs)
        if not configs or not all(isinstance(c, Config) for c in configs):
            raise TypeError("metile.autotune: configs is a non-empty list of metile.Config")
        names = {p.name for p in kernel.params}
        for name in key:
            if name not in names:
                raise ValueError(f"metile.autotune: key argument '{name}' is not a parameter of "
                                 f"{kernel.name}")
        prune = dict(prune_configs_by or {})
        for option in prune:
            if option != "early_config_prune":
                raise NotSupportedError(f"metile.autotune: prune_configs_by['{option}'] is not "
                                        "supported (only early_config_prune); omit it")
        symmetries = list(symmetries or ())
        if not all(isinstance(s, Symmetry) for s in symmetries):
            raise TypeError("metile.autotune: symmetries are metile.tune.Symmetry objects "
                            "(e.g. metile.tune.swap('BLOCK_M', 'BLOCK_N', when=...))")
        self.kernel, self.configs, self.key = kernel, configs, list(key)
        self.name = kernel.name
        self._early_prune = prune.get("early_config_prune")
        self._symmetries, self._timer = symmetries, timer
        self._warmup, self._samples, self._persist = int(warmup), int(samples), persist
        self._top = cost_model.check_top(cost_model_top)
        self._environment = None
        self._winners = {}  # tuning key -> (Config, report)
        self._last = None
        self.best_config = None
        self.stats = AutotuneStats()

    def __getitem__(self, grid):
        return _Launch(self, grid)

    def __repr__(self):
        return f"<metile.autotune {self.name}: {len(self.configs)} configs, key={self.key}>"

    @property
    def report(self):
        """The latest decision (a dict), or None before the first launch."""
        return self._last

    def explain(self):
        """The latest decision as formatted JSON."""
        return json.dumps(self._last, indent=2)

    # ---- choosing -----------------------------------------------------------------------
    def _named(self, args, kwargs):
        named = {p.name: v for p, v in zip(self.kernel.params, args)}
        named.update({k: v for k, v in kwargs.items() if k not in OPTIONS})
        return named

    def _tuning_key(self, named):
        values = [_described(named[k]) if k in named else None for k in self.key]
        buffers = [dtype_of(v) for _, v in sorted(named.items()) if dtype_of(v) is not None]
        return json.dumps([values, buffers])

    def _fields(self, grid, named, kwargs, tuning_key):
        if self._environment is None:
            self._environment = keys.environment()
        grid_key = keys.fingerprint(grid) if callable(grid) else repr(grid)
        return {"kernel": self.name, "fingerprint": keys.fingerprint(self.kernel),
                "configs": [repr(c) for c in self.configs], "tuning_key": tuning_key,
                "arguments": {k: _described(v) for k, v in sorted(named.items())},
                "grid": grid_key, "symmetries": [s.name for s in self._symmetries],
                "options": {k: repr(v) for k, v in sorted(kwargs.items()) if k in OPTIONS},
                "cost_model_top": self._top,
                "environment": self._environment}

    def choose(self, grid, args, kwargs):
        """The winning Config for a launch (measuring, or from a cache), and a prepared
        dispatch of it when one was made while measuring."""
        named = self._named(args, kwargs)
        tuning_key = self._tuning_key(named)
        found = self._winners.get(tuning_key)
        if found is not None:
            self.stats.memory_hits += 1
            self.best_config, self._last = found[0], dict(found[1], source="memory")
            return found[0], None
        fields = self._fields(grid, named, kwargs, tuning_key)
        persistable = self._persist and fields["fingerprint"] is not None and fields["grid"]
        stored = store.load(fields) if persistable else None
        winner = next((c for c in self.configs if stored and repr(c) == stored["winner"]), None)
        if winner is not None:
            self.stats.disk_hits += 1
            decision = dict(stored["report"], source="disk")
            self._winners[tuning_key] = (winner, decision)
            self.best_config, self._last = winner, decision
            return winner, None
        winner, dispatch, decision = self._measure(grid, args, kwargs, named, tuning_key)
        if persistable:
            decision["persisted"] = store.save(fields, {"winner": repr(winner),
                                                        "report": decision})
        report.publish(self.name, store.entry_name(fields), decision)
        self._winners[tuning_key] = (winner, decision)
        self.best_config, self._last = winner, decision
        return winner, dispatch

    def _measure(self, grid, args, kwargs, named, tuning_key):
        self.stats.tunings += 1
        configs = self.configs
        if self._early_prune is not None:
            configs = list(self._early_prune(configs, named))
        configs, removed = canonicalise(configs, self._symmetries, named)
        dispatches, survivors, pruned = [], [], []
        for config in configs:
            options = config.launch_options(self.kernel)
            clash = sorted(set(options) & set(kwargs))
            if clash:
                raise ValueError(f"metile.autotune: {self.name}: {', '.join(clash)} is set by "
                                 f"the configurations and by the launch; pass it in one place")
            try:
                dispatch = self.kernel[grid].prepare(*args, **kwargs, **options)
                dispatch.time()  # a first launch: limits checked at launch prune it too
            except CompilationError as e:  # OutOfResources included
                pruned.append({"config": repr(config), "error": str(e)})
                print(f"metile.autotune: {self.name}: config {config!r} pruned: it failed to "
                      f"compile: {e}", file=sys.stderr)
                continue
            dispatches.append(dispatch)
            survivors.append(config)
        if not survivors:
            raise CompilationError(f"metile.autotune: {self.name}: every configuration failed "
                                   "to compile: " + "; ".join(
                                       f"{p['config']}: {p['error']}" for p in pruned))
        order, ranking = cost_model.rank(
            [cost_model.describe(c, d) for c, d in zip(survivors, dispatches)], self._top)
        survivors = [survivors[i] for i in order]
        dispatches = [dispatches[i] for i in order]
        progress = _Progress(self.name, len(survivors))

        def timer(i):
            self.stats.timings += 1
            progress.tick(self.stats.timings)
            if self._timer is not None:
                return float(self._timer(survivors[i], dispatches[i]))
            return dispatches[i].time() / 1e3

        rows = [(repr(c), "ready", "", False, True, 0.0, 0.0, "") for c in survivors]
        index, selector_json = _core.select(rows, timer, "", 0.0, self._warmup, self._samples,
                                            2)
        selection = json.loads(selector_json)
        winner = survivors[index]
        progress.done(winner)
        decision = {"kernel": self.name, "tuning_key": json.loads(tuning_key),
                    "best_config": repr(winner), "reason": selection["reason"],
                    "source": "measured", "persisted": False, "configs": len(self.configs),
                    "measured": [repr(c) for c in survivors], "pruned": pruned,
                    "symmetry_removed": len(removed), "symmetry_orbits": removed,
                    "cost_model": ranking,
                    "selector": selection}
        return winner, dispatches[index], decision


class _Launch:
    """``tuned[grid]``: call it to launch with the winning configuration, or prepare() it."""

    def __init__(self, tuner, grid):
        self.tuner, self.grid = tuner, grid

    def prepare(self, *args, **kwargs):
        config, dispatch = self.tuner.choose(self.grid, args, kwargs)
        if dispatch is not None:
            return dispatch
        return self.tuner.kernel[self.grid].prepare(
            *args, **kwargs, **config.launch_options(self.tuner.kernel))

    def __call__(self, *args, **kwargs):
        self.prepare(*args, **kwargs)()


def autotune(configs, key, prune_configs_by=None, symmetries=None, *, timer=None, warmup=1,
             samples=5, persist=True, cost_model_top=None):
    """Decorator (above @metile.kernel): ``@metile.autotune(configs=[metile.Config(...)],
    key=["n"])``. `prune_configs_by={"early_config_prune": fn(configs, named_args)}` drops
    configurations before measuring; `symmetries` (metile.tune.Symmetry, e.g.
    metile.tune.swap("BLOCK_M", "BLOCK_N", when=lambda a: a["M"] == a["N"])) removes
    equivalent ones; `timer(config, dispatch)` replaces the device timing (seconds); the
    target operation-cost model orders the survivors and `cost_model_top=k` measures only its
    first k (default: all)."""

    def decorate(kernel):
        return Autotuner(kernel, configs, key, prune_configs_by, symmetries, timer, warmup,
                         samples, persist, cost_model_top)

    return decorate
