"""metile.Schedule: execution requirements (seed 002, "Execution Schedules and Fusion").

The constructor checks each control against its contract. Of a launch's SCHEDULE= only
vector_width is built: None groups four adjacent accesses of a thread into one packed vector
access where the compiler proves it safe, 1 keeps every access scalar, and 4 raises
NotSupportedError (grouping needs its proof and cannot be forced). Any other control raises
NotSupportedError; omit SCHEDULE (or pass None) for the compiler's automatic choices.
"""

from dataclasses import dataclass

_BACKENDS = ("auto", "simdgroup", "simdgroup_inline", "tensor_ops", "nax", "elementwise")
_STAGING = ("auto", "device", "threadgroup")


@dataclass(frozen=True)
class Schedule:
    backend: str = "auto"
    num_simdgroups: int = None
    staging: str = "auto"
    vector_width: int = None
    double_buffer: bool = None

    def __post_init__(self):
        if self.backend not in _BACKENDS:
            raise ValueError(f"Schedule: backend must be one of {', '.join(_BACKENDS)}, "
                             f"got {self.backend!r}")
        if self.num_simdgroups is not None and not (
                isinstance(self.num_simdgroups, int) and 1 <= self.num_simdgroups <= 32):
            raise ValueError("Schedule: num_simdgroups is an integer from 1 through 32, "
                             f"got {self.num_simdgroups!r}")
        if self.staging not in _STAGING:
            raise ValueError(f"Schedule: staging must be one of {', '.join(_STAGING)}, "
                             f"got {self.staging!r}")
        if self.vector_width not in (None, 1, 4):
            raise ValueError(f"Schedule: vector_width is None, 1 or 4, got {self.vector_width!r}")
        if self.double_buffer not in (None, True, False):
            raise ValueError(f"Schedule: double_buffer is None, True or False, "
                             f"got {self.double_buffer!r}")
        if self.vector_width == 4 and self.double_buffer is True:
            raise ValueError("Schedule: vector_width=4 and double_buffer=True cannot be combined")
