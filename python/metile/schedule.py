"""metile.Schedule: execution requirements (seed 002, "Execution Schedules and Fusion").

Pass one as SCHEDULE= to a launch or to prepare(). Each control left automatic is the
compiler's choice; each explicit one is a requirement that plan_schedule meets or rejects
with an error naming the control, the kernel and why (docs/schedules.md):

    backend         "auto" | "elementwise" | "simdgroup" | "simdgroup_inline" | "tensor_ops"
                    | "nax"
    num_simdgroups  None, or 1 through 32 SIMD groups per threadgroup
    staging         "auto" | "device" | "threadgroup"
    vector_width    None (automatic), 1 (no compiler vectorization) or 4 (required)
    double_buffer   None (automatic), True (required) or False (prohibited)
    route           "source" (the target's language: MSL, CUDA C++) | "ptx" (meTile writes
                    PTX for the CUDA driver, no NVRTC; a restricted subset, docs/ptx_route.md)

The constructor checks each control's contract (ValueError). Any Schedule, Schedule()
included, also specialises the launch's integer scalar arguments to constants, so that
shape proofs can use their values: each value compiles its own kernel.
"""

from dataclasses import dataclass, field

from . import _core


@dataclass(frozen=True)
class Schedule:
    backend: str = "auto"
    num_simdgroups: int = None
    staging: str = "auto"
    vector_width: int = None
    double_buffer: bool = None
    route: str = "source"
    _checked: object = field(init=False, repr=False, compare=False)  # _core.Schedule

    def __post_init__(self):
        for name, value, kinds in (("backend", self.backend, (str,)),
                                   ("staging", self.staging, (str,)),
                                   ("route", self.route, (str,)),
                                   ("num_simdgroups", self.num_simdgroups, (int, type(None))),
                                   ("vector_width", self.vector_width, (int, type(None))),
                                   ("double_buffer", self.double_buffer, (bool, type(None)))):
            if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
                raise TypeError(f"Schedule: {name} must be "
                                f"{' or '.join(k.__name__ for k in kinds)}, got {value!r}")
        object.__setattr__(self, "_checked", _core.Schedule(
            self.backend, self.num_simdgroups, self.staging, self.vector_width,
            self.double_buffer, self.route))
