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

