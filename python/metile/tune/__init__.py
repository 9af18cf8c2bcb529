"""metile.tune: the guarded runtime (docs/tuning.md). metile.select puts generated candidates
beside the framework's operation and runs whichever is correct and measurably faster;
metile.Config and metile.autotune choose among a kernel's configurations by measuring them.
Decisions persist (METILE_TUNE_CACHE moves them; clear_cache() or ``python -m metile.tune
--clear`` removes them)."""

from .autotune import Autotuner, autotune
from .config import Config
from .selector import Candidate, Selected, select
from .store import clear_cache, directory
from .symmetry import Symmetry, swap

__all__ = ["Autotuner", "Candidate", "Config", "Selected", "Symmetry", "autotune",
           "clear_cache", "directory", "select", "swap"]
