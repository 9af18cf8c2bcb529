"""The pieces of benchmarks/h200_memory_bound.py: kernels (meTile and Triton), cases (inputs,
references, checks, one case's run), timing, and report (the table; it needs no torch).
Every module but report imports torch, triton or metile: import them once
h200_memory_bound.import_gpu_stack() has checked that those are there."""
