#!/usr/bin/env bash
# Configures (once) and builds the C++ core into build/ (all targets, or the ones named),
# then installs the Python package (the extension metile._core and python/metile) into
# .venv, built incrementally in build-python/.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build build -j "$(nproc)" ${1:+--target "$@"}
echo "build: installing the Python package into .venv"
.venv/bin/python -m pip install -q --no-build-isolation .
