"""Makes `import metile` load the package of a meTile checkout, nothing copied or compiled
again: the Python sources from python/metile, the extension metile._core from
BUILD/python/metile, where the CMake build of BUILD links it.

    python scripts/metile_checkout.py BUILD

installs this file into that Python's site-packages as _metile_checkout.py, next to
metile_checkout.pth, which calls install() when the interpreter starts (scripts/build.sh runs
it with the venv's Python). A wheel of metile installed there before is uninstalled.
"""

# Every interpreter start imports this module: the installer's imports are in its functions.
import os
import sys
from importlib.machinery import ModuleSpec, SourceFileLoader


class CheckoutFinder:
    """Finds the package `name` in `sources`. Its submodules are looked up in `extension`
    first, so a stray _core left among the sources cannot shadow the one just built."""

    def __init__(self, name, sources, extension):
        self.name = name
        self.init = os.path.join(sources, "__init__.py")
        self.locations = [extension, sources]

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        spec = ModuleSpec(name, SourceFileLoader(name, self.init), origin=self.init,
                          is_package=True)
        spec.submodule_search_locations = self.locations
        spec.has_location = True
        return spec


def install(name, sources, extension):
    """Puts the finder first: it wins over site-packages and over the current directory."""
    sys.meta_path.insert(0, CheckoutFinder(name, sources, extension))


def uninstall_wheel(name):
    import importlib.metadata
    import subprocess

    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return
    subprocess.run([sys.executable, "-m", "pip", "uninstall", "-q", "-y", name], check=True)


def main(build_dir):
    import shutil
    import sysconfig

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sources = os.path.join(repo, "python", "metile")
    extension = os.path.join(os.path.abspath(build_dir), "python", "metile")
    uninstall_wheel("metile")
    site_packages = sysconfig.get_path("purelib")
    shutil.copyfile(__file__, os.path.join(site_packages, "_metile_checkout.py"))
    kernels = os.path.join(repo, "python", "metile_kernels")
    with open(os.path.join(site_packages, "metile_checkout.pth"), "w") as f:
        args = ("metile", sources, extension)
        f.write(f"import _metile_checkout; _metile_checkout.install{args!r}\n")
        args = ("metile_kernels", kernels, kernels)
        f.write(f"import _metile_checkout; _metile_checkout.install{args!r}\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1].strip())
    main(sys.argv[1])
