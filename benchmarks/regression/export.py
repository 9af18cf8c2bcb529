"""The exporter: what one meTile tree emits for every memory-bound case, as JSON. Run with a
tree's own Python (the harness runs it for the baseline in a subprocess):

    PYTHON export.py --root TREE [--build build] [--quick] [--metile-block 1024] --out FILE.json

It imports TREE's metile (python/metile and TREE/BUILD's _core), this file's tree's cases
(benchmarks/memory_bound/cases.py, the same for both trees, so that only the compilers
differ), prepares each case's kernel on the default device and writes, per case, its
kernel name, the device, the emitted source, the ABI and the grid. It uses only the API the
trees share: kernel[grid].prepare(...) and the dispatch's source, abi and grid.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # the tree this file (and the cases) belong to
DISPATCH_API = ("source", "abi", "grid", "kernel_name")


def use_checkout(root, build="build"):
    """Makes `import metile` load `root`'s python/metile and root/BUILD's _core, ahead of any
    installed copy (scripts/metile_checkout.py's finder); returns the module, after checking
    that it came from there."""
    root = Path(root).resolve()
    sources, extension = root / "python" / "metile", root / build / "python" / "metile"
    for needed in (sources / "__init__.py", extension):
        if not needed.exists():
            raise SystemExit(f"{root} is not a built meTile checkout: {needed} is missing "
                             "(build it with scripts/build.sh or scripts/h200_suite.sh build)")
    if "metile" in sys.modules:
        raise SystemExit("use_checkout: metile is already imported")
    spec = importlib.util.spec_from_file_location("metile_checkout",
                                                  HERE / "scripts" / "metile_checkout.py")
    checkout = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checkout)
    checkout.install("metile", str(sources), str(extension))
    import metile

    package, core = Path(metile.__file__).resolve(), Path(metile._core.__file__).resolve()
    if not (package.is_relative_to(sources) and core.is_relative_to(extension.resolve())):
        raise SystemExit(f"use_checkout: import metile loaded {package} and {core}, not "
                         f"{root}'s")
    return metile


def _git(root, *args):
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=20).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def export(root, build, quick, block, progress=None):
    """{"tree": metadata, "cases": [entry]} for `root`'s metile (already imported through
    use_checkout) over this tree's memory-bound cases."""
    import metile
    import torch

    sys.path.insert(0, str(HERE / "benchmarks"))
    from memory_bound.cases import case_list
    from memory_bound.kernels import METILE_KERNELS

    if not hasattr(METILE_KERNELS["vector_add"][(1,)], "prepare"):
        raise SystemExit(f"the meTile of {root} ({metile.__file__}) has no kernel[grid].prepare"
                         "(...): the exporter needs it")

    tree = {"root": str(Path(root).resolve()),
            "commit": os.environ.get("METILE_COMMIT") or _git(root, "rev-parse", "HEAD"),
            "uncommitted_changes": _git(root, "status", "--porcelain") is not None,
            "python": sys.executable, "metile": metile.__file__,
            "core": metile._core.__file__, "device": metile.device(),
            "cases_from": str(HERE / "benchmarks" / "memory_bound" / "cases.py")}
    entries = []
    for case in case_list(quick, block):
        inputs = case.make_inputs()
        dispatch = case.metile_launch(inputs, case.outputs())
        missing = [name for name in DISPATCH_API if not hasattr(dispatch, name)]
        if missing:
            raise SystemExit(f"the meTile of {root} ({metile.__file__}) has no "
                             f"Dispatch.{', Dispatch.'.join(missing)}: the exporter needs "
                             f"kernel[grid].prepare(...) with {', '.join(DISPATCH_API)}")
        entries.append({"case": case.name(), "kernel_name": dispatch.kernel_name,
                        "device": metile.device(), "source": dispatch.source,
                        "abi": dispatch.abi, "grid": list(dispatch.grid)})
        if progress:
            progress(f"exported {case.name()} ({len(dispatch.source)} characters)")
        del inputs, dispatch
        torch.cuda.empty_cache()
    return {"tree": tree, "cases": entries}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the meTile checkout to export")
    parser.add_argument("--build", default="build", help="its build folder, relative to it")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--metile-block", type=int, default=1024)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    use_checkout(args.root, args.build)
    try:
        import torch  # noqa: F401
        import triton  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"export: {sys.executable} cannot import torch and triton ({e}); "
                         "the cases need both (pass another --baseline-python)") from None
    result = export(args.root, args.build, args.quick, args.metile_block,
                    lambda line: print(f"  [baseline {Path(args.root).resolve().name}] {line}", file=sys.stderr,
                                       flush=True))
    with open(args.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
