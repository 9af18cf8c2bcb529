"""The developer install (scripts/metile_checkout.py, run by scripts/build.sh): `import metile`
loads python/metile and build/'s extension from any directory, and no other copy shadows them."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def imported_files(cwd, env=None):
    code = "import metile, metile._core; print(metile.__file__); print(metile._core.__file__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, check=True,
                         capture_output=True, text=True).stdout
    return [Path(line).resolve() for line in out.splitlines()]


def load_checkout_module():
    spec = importlib.util.spec_from_file_location("metile_checkout",
                                                  REPO / "scripts" / "metile_checkout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("where", ["tmp", "repo"])
def test_import_finds_the_checkout_from_any_directory(tmp_path, where):
    # The repository root holds metile/, the C++ sources: it must not be taken for the package.
    package, core = imported_files(tmp_path if where == "tmp" else REPO)
    assert package == REPO / "python" / "metile" / "__init__.py"
    assert core.parent == REPO / "build" / "python" / "metile"


def test_a_copy_earlier_on_sys_path_does_not_shadow_the_checkout(tmp_path):
    stale = tmp_path / "metile"
    stale.mkdir()
    (stale / "__init__.py").write_text("raise ImportError('the stale copy was imported')\n")
    package, _ = imported_files(tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert package == REPO / "python" / "metile" / "__init__.py"


def test_the_extension_folder_wins_over_a_stray_module_in_the_sources(tmp_path, monkeypatch):
    sources, extension = tmp_path / "sources", tmp_path / "extension"
    sources.mkdir()
    extension.mkdir()
    (sources / "__init__.py").write_text("")
    (sources / "_core.py").write_text("WHERE = 'sources'\n")
    (sources / "frames.py").write_text("WHERE = 'sources'\n")
    (extension / "_core.py").write_text("WHERE = 'extension'\n")
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    load_checkout_module().install("checkout_probe", str(sources), str(extension))
    try:
        from checkout_probe import _core, frames
    finally:
        for name in ("checkout_probe", "checkout_probe._core", "checkout_probe.frames"):
            sys.modules.pop(name, None)
    assert (_core.WHERE, frames.WHERE) == ("extension", "sources")
