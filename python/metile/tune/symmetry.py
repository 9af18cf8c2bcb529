"""Bounded schedule search (seed 001, "Kernel Compilation"): an autotuner's configurations are
canonicalised under the symmetries the caller declares legal for the concrete arguments, so
each orbit is measured once. A symmetry maps a configuration's settings (its kwargs, with
num_warps and num_simdgroups beside them) to an equivalent one; `when(args)` says whether it
holds for these arguments (e.g. M == N for the BLOCK_M/BLOCK_N exchange of a GEMM). The
survivors are then ordered by the target operation-cost model (cost_model.py).
"""

_ORBIT_LIMIT = 64  # members explored per configuration; a group larger than this is an error


class Symmetry:
    """`transform(settings) -> settings` on a configuration's settings dict, legal when
    `when(args)` (a dict of the launch's arguments by name) is true (always, if None)."""

    def __init__(self, name, transform, when=None):
        if not callable(transform) or (when is not None and not callable(when)):
            raise TypeError(f"metile.tune.Symmetry {name!r}: transform and when are callables")
        self.name, self.transform, self.when = name, transform, when

    def __repr__(self):
        return f"Symmetry({self.name!r})"


def swap(first, second, when=None, name=None):
    """The exchange of two settings (e.g. "BLOCK_M" and "BLOCK_N"), legal when `when(args)`."""

    def exchange(settings):
        if first not in settings or second not in settings:
            return settings
        return dict(settings, **{first: settings[second], second: settings[first]})

    return Symmetry(name or f"swap {first}/{second}", exchange, when)


def _frozen(settings):
    return tuple(sorted(settings.items(), key=lambda kv: kv[0]))


def canonicalise(configs, symmetries, args):
    """(the configurations to measure, the removed ones as {"config", "equivalent_to",
    "symmetries"}): a configuration is removed when a member of its orbit under the legal
    symmetries comes earlier in the list."""
    legal = [s for s in symmetries if s.when is None or s.when(args)]
    kept, removed, seen = [], [], {}  # seen: settings of a kept config's orbit -> that config
    for config in configs:
        start = _frozen(config.settings())
        if start in seen:
            representative, path = seen[start]
            removed.append({"config": repr(config), "equivalent_to": repr(representative),
                            "symmetries": path})
            continue
        orbit, frontier = {start: []}, [start]
        while frontier:
            current = frontier.pop()
            for s in legal:
                image = _frozen(s.transform(dict(current)))
                if image not in orbit:
                    orbit[image] = orbit[current] + [s.name]
                    frontier.append(image)
                    if len(orbit) > _ORBIT_LIMIT:
                        raise ValueError(f"metile.autotune: the symmetries {legal} generate more "
                                         f"than {_ORBIT_LIMIT} configurations from {config!r}")
        for member, path in orbit.items():
            seen.setdefault(member, (config, path))
        kept.append(config)
    return kept, removed
