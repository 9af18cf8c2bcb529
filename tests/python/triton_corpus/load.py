"""The Triton corpus: kernels written in Triton's language, one per file of this folder, each
with `import triton` / `import triton.language as tl`. `load` gives a kernel's module as
written, for Triton, or with the import renamed for meTile (`import metile as triton`,
`import metile as tl`) plus any edit meTile cannot yet do without, each listed. The text is
written to a file of its own, so that both compilers read the kernel's source as Triton does.
tests/python/test_triton_corpus.py runs the meTile side against numpy;
benchmarks/h200_triton_sources.py times both on a GPU."""

from __future__ import annotations

import importlib.util
import os
import tempfile

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
IMPORTS = (("import triton.language as tl\n", "import metile as tl\n"),
           ("import triton\n", "import metile as triton\n"))
# What each source needs changed beyond the import, as (old, new): the text must hold `old`.
# The tutorial matmul runs as written.
EDITS = {}


def source_text(name, compiler):
    """The text `compiler` ("triton" or "metile") compiles, and the edits made to it beyond
    the import."""
    with open(os.path.join(HERE, name + ".py")) as f:
        text = f.read()
    if compiler == "triton":
        return text, []
    edits = []
    for old, new in IMPORTS + EDITS.get(name, ()):
        if old not in text:
            raise RuntimeError(f"triton_corpus/{name}.py no longer holds {old!r}")
        text = text.replace(old, new)
        if (old, new) not in IMPORTS:
            edits.append({"from": old, "to": new})
    return text, edits


def load(name, compiler):
    """The module of source `name` for `compiler`, and the edits made to its text."""
    text, edits = source_text(name, compiler)
    folder = tempfile.mkdtemp(prefix=f"triton_corpus_{compiler}_")
    path = os.path.join(folder, f"{compiler}_{name}.py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(f"{compiler}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, edits



_FP8 = ("float8_e4m3fn", "float8_e5m2")  # the names torch and ml_dtypes share


def on_device(*arrays):
    """The numpy arrays as a Triton user's caller holds them: torch CUDA tensors on the cuda
    device (used in place), the arrays themselves on the host target. One array or a list."""
    import metile
    if metile.device() != "cuda":
        return arrays[0] if len(arrays) == 1 else list(arrays)
    import torch
    tensors = []
    for x in arrays:
        x = np.ascontiguousarray(x)
        if x.dtype == ml_dtypes.bfloat16:
            t = torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
        elif x.dtype.name in _FP8:
            t = torch.from_numpy(x.view(np.uint8)).view(getattr(torch, x.dtype.name))
        else:
            t = torch.from_numpy(x)
        tensors.append(t.cuda())
    return tensors[0] if len(tensors) == 1 else tensors


def to_numpy(x):
    """A kernel's output, from on_device's array or tensor, as numpy (bf16 as ml_dtypes')."""
    if isinstance(x, np.ndarray):
        return x
    import torch
    x = x.detach().cpu()
    if x.dtype == torch.bfloat16:
        return x.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    name = str(x.dtype).split(".")[-1]
    if name in _FP8:
        return x.view(torch.uint8).numpy().view(getattr(ml_dtypes, name))
    return x.numpy()
