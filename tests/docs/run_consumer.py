"""Installs the C++ core from a build tree (cmake --install), builds tests/docs/consumer
against it with find_package(metile), and runs what it built: examples/cpp_vector_add and
every complete C++ program of README.md and docs/*.md (doc_blocks.py).

    python3 tests/docs/run_consumer.py <build dir> <scratch dir>
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import doc_blocks


def run(command, **kwargs):
    print("+", " ".join(map(str, command)), flush=True)
    subprocess.run([str(c) for c in command], check=True, **kwargs)


def main(build, scratch):
    shutil.rmtree(scratch, ignore_errors=True)
    prefix, programs, consumer = scratch / "prefix", scratch / "doc_programs", scratch / "build"
    run(["cmake", "--install", build, "--prefix", prefix, "--component", "devel"])
    programs.mkdir(parents=True)
    names = []
    for block in doc_blocks.all_blocks():
        if block.runs and block.language == "cpp":
            (programs / f"{block.name}.cc").write_text(
                f'#line {block.line + 1} "{block.path}"\n{block.code}', encoding="utf-8")
            names.append(block.name)
    cache = {}  # build/CMakeCache.txt: NAME:TYPE=VALUE, including what -D set untyped
    for line in (build / "CMakeCache.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith(("#", "//")) and ":" in line and "=" in line:
            cache[line.split(":", 1)[0]] = line.split("=", 1)[1]
    # The consumer finds meTile's dependencies where the build found them (a machine with
    # them outside the system prefixes names them with CMAKE_PREFIX_PATH or <pkg>_DIR).
    prefixes = ";".join(p for p in [str(prefix), cache.get("CMAKE_PREFIX_PATH", "")] if p)
    found = [f"-D{name}={cache[name]}" for name in ("Boost_DIR", "nlohmann_json_DIR")
             if cache.get(name, "").strip() and not cache[name].endswith("-NOTFOUND")]
    configure = ["cmake", "-S", doc_blocks.REPO / "tests/docs/consumer", "-B", consumer,
                 "-G", "Ninja", "-DCMAKE_BUILD_TYPE=",
                 f"-DCMAKE_CXX_COMPILER={cache['CMAKE_CXX_COMPILER']}",
                 f"-DCMAKE_PREFIX_PATH={prefixes}", *found, f"-DDOC_PROGRAMS={programs}",
                 f"-DVECTOR_ADD_SOURCE={doc_blocks.REPO / 'examples/cpp_vector_add/main.cc'}"]
    if shutil.which("ccache"):
        configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    run(configure)
    run(["cmake", "--build", consumer, "-j", str(os.cpu_count() or 1)])
    for name in ["vector_add", *names]:
        run([consumer / name])
    print(f"run_consumer: {len(names) + 1} programs built against the install and run")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve())
