"""metile.Config: one configuration of an autotuned kernel (Triton's triton.Config)."""

from ..errors import NotSupportedError

_UNSUPPORTED = {
    "num_ctas": "thread-block clusters are not supported",
    "maxnreg": "register limits are not supported",
}


class Config:
    """`kwargs`: the constexpr values of this configuration. `num_simdgroups` sets NUM_SG,
    the kernel's SIMD-group count: the kernel's NUM_SG constexpr if it has one, else the
    launch option num_warps (a SIMD group is a warp of 32 threads on every target); `num_warps`
    is Triton's spelling of the same. Both default to automatic (the compiler's choice).
    `num_stages` is the launch option of that name (the K loops' pipelining depth asked for;
    docs/python.md says what meTile makes of it)."""

    def __init__(self, kwargs, num_simdgroups=None, num_warps=None, num_stages=None,
                 num_ctas=None, maxnreg=None):
        for option, value in (("num_ctas", num_ctas), ("maxnreg", maxnreg)):
            if value is not None and not (option == "num_ctas" and value == 1):
                raise NotSupportedError(f"metile.Config: {option} is not supported "
                                        f"({_UNSUPPORTED[option]}); omit it")
        if not isinstance(kwargs, dict):
            raise TypeError(f"metile.Config: kwargs is a dict of constexpr values, got "
                            f"{type(kwargs).__name__}")
        if num_simdgroups is not None and num_warps is not None and num_simdgroups != num_warps:
            raise ValueError(f"metile.Config: num_simdgroups={num_simdgroups} and "
                             f"num_warps={num_warps} disagree (both count SIMD groups)")
        self.kwargs = dict(kwargs)
        self.num_simdgroups = num_simdgroups if num_simdgroups is not None else num_warps
        self.num_warps = self.num_simdgroups
        self.num_stages = num_stages

    def settings(self):
        """The kwargs with the SIMD-group count beside them (what symmetries map)."""
        settings = dict(self.kwargs)
        if self.num_simdgroups is not None:
            settings["num_simdgroups"] = self.num_simdgroups
        if self.num_stages is not None:
            settings["num_stages"] = self.num_stages
        return settings

    def launch_options(self, kernel):
        """The keyword arguments a launch of `kernel` takes for this configuration."""
        options = dict(self.kwargs)
        if self.num_simdgroups is not None:
            has_num_sg = any(p.name == "NUM_SG" and p.constexpr for p in kernel.params)
            options["NUM_SG" if has_num_sg else "num_warps"] = self.num_simdgroups
        if self.num_stages is not None:
            options["num_stages"] = self.num_stages
        return options

    def __repr__(self):
        parts = [f"{k}: {v!r}" for k, v in self.kwargs.items()]
        if self.num_simdgroups is not None:
            parts.append(f"num_simdgroups: {self.num_simdgroups}")
        if self.num_stages is not None:
            parts.append(f"num_stages: {self.num_stages}")
        return ", ".join(parts) or "(defaults)"

    def __eq__(self, other):
        return isinstance(other, Config) and self.settings() == other.settings()

    def __hash__(self):
        return hash(tuple(sorted(self.settings().items())))
