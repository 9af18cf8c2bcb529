"""The paired regression harness: one meTile tree's kernels against another's, in one process.

    python3 -m benchmarks.regression --baseline-root /path/to/other/checkout \\
        [--rounds-per-sample 5] [--samples 10] [--threshold 0.15] [--quick] [--out FILE.json]

The baseline checkout (built: its build/ and, if it has one, its .venv) exports, with its
own Python and its own metile, the CUDA source and ABI of every memory-bound case's kernel
(benchmarks/memory_bound/cases.py, this tree's cases); this tree exports the same for
itself. Then, in this process, both sources are built by this tree's cuda device (one
compiler, one set of NVRTC options), both outputs are checked against the float64
reference, and the two are timed in ABBA order with CUDA events on resident inputs. Every
case is reported as a regression, an improvement or within the threshold; the exit status
is non-zero when any case regressed or failed. docs/cuda.md, "Paired regression harness".

paired.py holds what needs no GPU (order, classification, the report); export.py the
exporter each tree runs; measure.py the timing.
"""
