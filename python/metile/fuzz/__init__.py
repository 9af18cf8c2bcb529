"""The tracer fuzzer: random valid @metile.kernel programs run through trace, compile and
launch on the current device and compared with a numpy interpreter of the same program, and
random misuses that must raise a user error. Deterministic by seed (docs/reliability.md,
"Fuzzing"):

    python -m metile.fuzz --seed 0 --count 200     # cases 0..199
    python -m metile.fuzz --minutes 20             # as many as fit, from a random seed

``run_case(seed)`` runs one case and raises ``Finding`` for a wrong result, an internal
error, or a misuse that did not give a user error; ``fingerprint(seed)`` hashes the case's
source, which tests/fuzz/corpus/tracer/seeds.txt records beside each seed that found a
defect.
"""

from .runner import Finding, fingerprint, run_case

__all__ = ["Finding", "fingerprint", "run_case"]
