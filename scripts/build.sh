#!/usr/bin/env bash
# Configures (once) and builds build/ (all targets, or the ones named): the C++ core, tools,
# tests, benchmarks and the Python extension metile._core, linked against the same libraries.
# Then makes the venv's `import metile` load python/metile and build/'s _core in place
# (scripts/metile_checkout.py), so nothing is compiled twice and a rebuild is seen at once.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
python="$PWD/.venv/bin/python"
# Configured for the venv's Python (and its nanobind), warnings as errors as in CI; a build/
# configured otherwise, e.g. by an older build.sh, is configured again, which rebuilds only
# what changed.
if [ ! -f build/build.ninja ] ||
  ! grep -qsx "METILE_BUILD_PYTHON:BOOL=ON" build/CMakeCache.txt ||
  ! grep -qsx "METILE_WARNINGS_AS_ERRORS:BOOL=ON" build/CMakeCache.txt ||
  ! grep -qsx "Python_EXECUTABLE:[A-Z]*=$python" build/CMakeCache.txt; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DMETILE_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$python" -DMETILE_WARNINGS_AS_ERRORS=ON
fi
cmake --build build -j "$(nproc)" ${1:+--target "$@"}
"$python" scripts/metile_checkout.py build
